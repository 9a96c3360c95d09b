// Sentinel queries and the +switch-master watcher.
#include "route/sentinel.h"

#include <hiredis/hiredis.h>
#include <poll.h>

#include <charconv>
#include <chrono>
#include <memory>

#include <spdlog/spdlog.h>

namespace sp::route {
namespace {

constexpr int kConnectTimeoutMs = 1000;
constexpr int kPollMs = 200;

struct ContextDeleter {
  void operator()(redisContext* c) const { redisFree(c); }
};
using Context = std::unique_ptr<redisContext, ContextDeleter>;

struct ReplyDeleter {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using Reply = std::unique_ptr<redisReply, ReplyDeleter>;

// A port number from sentinel output; 0 when it is not one.
uint16_t parsePort(const std::string& text) {
  unsigned value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && end == text.data() + text.size() && value > 0 && value < 65536
             ? static_cast<uint16_t>(value)
             : 0;
}

std::string label(const SentinelAddress& s) { return s.host + ":" + std::to_string(s.port); }

// A connected (and authenticated) context, or nullptr with *error set.
Context connectTo(const SentinelAddress& s, const std::string& password, std::string* error) {
  timeval tv{kConnectTimeoutMs / 1000, (kConnectTimeoutMs % 1000) * 1000};
  Context c(redisConnectWithTimeout(s.host.c_str(), s.port, tv));
  if (!c || c->err) {
    *error = label(s) + ": " + (c ? c->errstr : "out of memory");
    return nullptr;
  }
  redisSetTimeout(c.get(), tv);
  if (!password.empty()) {
    Reply r(static_cast<redisReply*>(redisCommand(c.get(), "AUTH %s", password.c_str())));
    if (!r || r->type == REDIS_REPLY_ERROR) {
      *error = label(s) + ": AUTH failed" + (r ? std::string(": ") + r->str : "");
      return nullptr;
    }
  }
  return c;
}

}  // namespace

bool querySentinelPrimary(const std::vector<SentinelAddress>& sentinels,
                          const std::string& password, const std::string& master, std::string* host,
                          uint16_t* port, std::string* error) {
  std::string errors;
  for (const auto& s : sentinels) {
    std::string why;
    Context c = connectTo(s, password, &why);
    if (c) {
      Reply r(static_cast<redisReply*>(
          redisCommand(c.get(), "SENTINEL get-master-addr-by-name %s", master.c_str())));
      if (r && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
          r->element[0]->type == REDIS_REPLY_STRING && r->element[1]->type == REDIS_REPLY_STRING) {
        *host = r->element[0]->str;
        *port = parsePort(r->element[1]->str);
        if (*port != 0) {
          return true;
        }
      }
      why = label(s) + (r && r->type == REDIS_REPLY_ERROR
                            ? std::string(": ") + r->str
                            : ": does not know master '" + master + "'");
    }
    errors += errors.empty() ? why : "; " + why;
  }
  *error = "no sentinel gave the primary of '" + master + "' (" + errors + ")";
  return false;
}

SentinelWatcher::SentinelWatcher(std::vector<SentinelAddress> sentinels, std::string password,
                                 std::vector<std::string> masters, OnSwitch on_switch)
    : sentinels_(std::move(sentinels)),
      password_(std::move(password)),
      masters_(std::move(masters)),
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
    std::string error;
    Context c = connectTo(s, password_, &error);
    if (!c) {
      spdlog::warn("sentinel {}", error);
      std::this_thread::sleep_for(std::chrono::milliseconds(kPollMs));
      continue;
    }
    Reply sub(static_cast<redisReply*>(redisCommand(c.get(), "SUBSCRIBE +switch-master")));
    if (!sub || sub->type == REDIS_REPLY_ERROR) {
      spdlog::warn("sentinel {}: SUBSCRIBE +switch-master failed", label(s));
      continue;
    }
    spdlog::info("sentinel {}: following +switch-master", label(s));
    // Catch up with switches missed while no sentinel was followed.
    for (const auto& master : masters_) {
      std::string host, why;
      uint16_t port = 0;
      if (querySentinelPrimary({s}, password_, master, &host, &port, &why)) {
        on_switch_(master, host, port);
      }
    }
    while (!stop_) {
      pollfd p{c->fd, POLLIN, 0};
      int rc = poll(&p, 1, kPollMs);
      if (rc == 0) {
        continue;
      }
      if (rc < 0 || redisBufferRead(c.get()) != REDIS_OK) {
        spdlog::warn("sentinel {}: connection lost", label(s));
        break;
      }
      void* raw = nullptr;
      while (redisGetReplyFromReader(c.get(), &raw) == REDIS_OK && raw != nullptr) {
        Reply msg(static_cast<redisReply*>(raw));
        raw = nullptr;
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
}

}  // namespace sp::route
