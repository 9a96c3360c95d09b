// Sentinel queries and the +switch-master watcher.
#include "route/sentinel.h"

#include <hiredis/hiredis.h>

#include <charconv>
#include <chrono>

#include <spdlog/spdlog.h>

#include "route/blocking_client.h"

namespace sp::route {
namespace {

constexpr std::chrono::milliseconds kConnectTimeout{1000};
constexpr std::chrono::milliseconds kIoTimeout{1000};
constexpr std::chrono::milliseconds kPoll{200};  // how often the watcher looks at stop_

// A port number from sentinel output; 0 when it is not one.
uint16_t parsePort(const std::string& text) {
  unsigned value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && end == text.data() + text.size() && value > 0 && value < 65536
             ? static_cast<uint16_t>(value)
             : 0;
}

std::string label(const SentinelAddress& s) { return s.host + ":" + std::to_string(s.port); }

// A connected (and authenticated) client into *out.
Status connectTo(const SentinelAddress& s, const std::string& password,
                 std::shared_ptr<const tls::TlsContext> tls, std::unique_ptr<BlockingClient>* out) {
  auto c = std::make_unique<BlockingClient>(
      BlockingClient::Options{kConnectTimeout, kIoTimeout, std::move(tls)});
  if (!c->connect(s.host, s.port)) {
    return Status::failure(label(s) + ": " + c->error());
  }
  if (!password.empty()) {
    Reply r = c->command({"AUTH", password});
    if (!r || r->type == REDIS_REPLY_ERROR) {
      return Status::failure(label(s) +
                             ": AUTH failed: " + (r ? std::string(r->str, r->len) : c->error()));
    }
  }
  *out = std::move(c);
  return Status();
}

}  // namespace

Status querySentinelPrimary(const std::vector<SentinelAddress>& sentinels,
                            const std::string& password, const std::string& master,
                            const std::shared_ptr<const tls::TlsContext>& tls, std::string* host,
                            uint16_t* port) {
  std::string errors;
  for (const auto& s : sentinels) {
    std::unique_ptr<BlockingClient> c;
    const Status connected = connectTo(s, password, tls, &c);
    std::string why = connected.message();
    if (connected.ok()) {
      Reply r = c->command({"SENTINEL", "get-master-addr-by-name", master});
      if (r && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
          r->element[0]->type == REDIS_REPLY_STRING && r->element[1]->type == REDIS_REPLY_STRING) {
        *host = r->element[0]->str;
        *port = parsePort(r->element[1]->str);
        if (*port != 0) {
          return Status();
        }
      }
      why = label(s) + (!r                             ? ": " + c->error()
                        : r->type == REDIS_REPLY_ERROR ? ": " + std::string(r->str, r->len)
                                                       : ": does not know master '" + master + "'");
    }
    errors += errors.empty() ? why : "; " + why;
  }
  return Status::failure("no sentinel gave the primary of '" + master + "' (" + errors + ")");
}

SentinelWatcher::SentinelWatcher(std::vector<SentinelAddress> sentinels, std::string password,
                                 std::vector<std::string> masters, TlsSource tls,
                                 OnSwitch on_switch)
    : sentinels_(std::move(sentinels)),
      password_(std::move(password)),
      masters_(std::move(masters)),
      tls_(std::move(tls)),
      on_switch_(std::move(on_switch)) {}

SentinelWatcher::~SentinelWatcher() { stop(); }

void SentinelWatcher::start() {
  thread_ = std::thread([this] { run(); });
}

void SentinelWatcher::stop() {
  stop_ = true;
  if (thread_.joinable()) {
    thread_.join();
  }
}

bool SentinelWatcher::watchedMaster(const std::string& name) const {
  for (const auto& m : masters_) {
    if (m == name) {
      return true;
    }
  }
  return false;
}

void SentinelWatcher::run() {
  size_t next = 0;
  while (!stop_) {
    const SentinelAddress& s = sentinels_[next++ % sentinels_.size()];
    const std::shared_ptr<const tls::TlsContext> tls = tls_ ? tls_() : nullptr;
    std::unique_ptr<BlockingClient> c;
    if (Status connected = connectTo(s, password_, tls, &c); !connected.ok()) {
      spdlog::warn("sentinel {}", connected.message());
      std::this_thread::sleep_for(kPoll);
      continue;
    }
    Reply sub = c->command({"SUBSCRIBE", "+switch-master"});
    if (!sub || sub->type == REDIS_REPLY_ERROR) {
      spdlog::warn("sentinel {}: SUBSCRIBE +switch-master failed", label(s));
      continue;
    }
    spdlog::info("sentinel {}: following +switch-master", label(s));
    // Catch up with switches missed while no sentinel was followed.
    for (const auto& master : masters_) {
      std::string host;
      uint16_t port = 0;
      if (querySentinelPrimary({s}, password_, master, tls, &host, &port).ok()) {
        on_switch_(master, host, port);
      }
    }
    while (!stop_) {
      Reply msg;
      const BlockingClient::ReadResult read = c->nextReply(kPoll, &msg);
      if (read == BlockingClient::ReadResult::kTimeout) {
        continue;
      }
      if (read == BlockingClient::ReadResult::kFailed) {
        spdlog::warn("sentinel {}: connection lost: {}", label(s), c->error());
        break;
      }
      // ["message", "+switch-master", "<name> <old-ip> <old-port> <new-ip> <new-port>"]
      if (msg->type != REDIS_REPLY_ARRAY || msg->elements != 3 ||
          msg->element[2]->type != REDIS_REPLY_STRING) {
        continue;
      }
      std::string text(msg->element[2]->str, msg->element[2]->len);
      std::vector<std::string> parts;
      size_t start = 0;
      while (start <= text.size()) {
        size_t sp = text.find(' ', start);
        parts.push_back(text.substr(start, sp == std::string::npos ? sp : sp - start));
        if (sp == std::string::npos) {
          break;
        }
        start = sp + 1;
      }
      if (parts.size() == 5 && watchedMaster(parts[0]) && parsePort(parts[4]) != 0) {
        spdlog::info("sentinel {}: +switch-master {} -> {}:{}", label(s), parts[0], parts[3],
                     parts[4]);
        on_switch_(parts[0], parts[3], parsePort(parts[4]));
      }
    }
  }
}

}  // namespace sp::route
