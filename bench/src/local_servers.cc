// Starting and probing local servers.
#include "local_servers.h"

#include <arpa/inet.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

namespace sp::bench {
namespace {

using Clock = std::chrono::steady_clock;

std::string render(const redisReply* r) {
  switch (r->type) {
    case REDIS_REPLY_STATUS:
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_ERROR:
      return std::string(r->str, r->len);
    case REDIS_REPLY_INTEGER:
      return "(integer) " + std::to_string(r->integer);
    case REDIS_REPLY_NIL:
      return "(nil)";
    case REDIS_REPLY_ARRAY: {
      std::string out = "[";
      for (size_t i = 0; i < r->elements; ++i) {
        out += i ? ", " : "";
        out += render(r->element[i]);
      }
      return out + "]";
    }
    default:
      return "";
  }
}

// Polls until PING answers, the process exits or the timeout passes.
bool waitForPing(const Endpoint& ep, ChildProcess& process, std::chrono::milliseconds timeout,
                 std::string* error) {
  const auto deadline = Clock::now() + timeout;
  std::string reply;
  std::string last;
  while (Clock::now() < deadline) {
    if (!process.running()) {
      *error = process.describeExit();
      return false;
    }
    if (redisCall(ep, {"PING"}, &reply, &last, 200)) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
  }
  *error = "no answer to PING on " + ep.text() + " after " + std::to_string(timeout.count()) +
           " ms (" + last + ")";
  return false;
}

// A proxy is ready when GETs of many keys (so every shard of an even split is hit with
// overwhelming probability) all get non-error replies.
bool waitForShards(const Endpoint& ep, ChildProcess& process, std::chrono::milliseconds timeout,
                   std::string* error) {
  const auto deadline = Clock::now() + timeout;
  std::string last;
  while (Clock::now() < deadline) {
    if (!process.running()) {
      *error = process.describeExit();
      return false;
    }
    redisContext* c = redisConnectWithTimeout(ep.host.c_str(), ep.port, timeval{1, 0});
    bool all = c != nullptr && !c->err;
    if (all) {
      timeval tv{2, 0};
      redisSetTimeout(c, tv);
      for (int i = 0; i < 200; ++i) {
        redisAppendCommand(c, "GET shardbench:probe:%d", i);
      }
      for (int i = 0; i < 200 && all; ++i) {
        void* r = nullptr;
        if (redisGetReply(c, &r) != REDIS_OK || r == nullptr) {
          all = false;
          last = c->errstr;
          break;
        }
        auto* reply = static_cast<redisReply*>(r);
        if (reply->type == REDIS_REPLY_ERROR) {
          all = false;
          last = std::string(reply->str, reply->len);
        }
        freeReplyObject(reply);
      }
    } else if (c != nullptr) {
      last = c->errstr;
    }
    if (c != nullptr) {
      redisFree(c);
    }
    if (all) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  *error = "shards not reachable through " + ep.text() + " after " +
           std::to_string(timeout.count()) + " ms (" + last + ")";
  return false;
}

std::string failure(const std::string& what, const std::string& why, ChildProcess& p) {
  std::string tail = p.logTail(1200);
  std::string msg = what + " failed to start: " + why;
  if (!tail.empty()) {
    msg += "; log " + p.logPath() + " ends with: " + tail;
  }
  return msg;
}

}  // namespace

bool parseEndpoint(std::string_view text, Endpoint* out, std::string* error) {
  std::string_view host;
  std::string_view port;
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      *error = "bad address '" + std::string(text) + "': expected [v6]:port";
      return false;
    }
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    const size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) {
      *error = "bad address '" + std::string(text) + "': expected host:port";
      return false;
    }
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  unsigned value = 0;
  auto res = std::from_chars(port.data(), port.data() + port.size(), value);
  if (host.empty() || res.ec != std::errc() || res.ptr != port.data() + port.size() || value == 0 ||
      value > 65535) {
    *error = "bad address '" + std::string(text) + "': expected host:port with a port 1..65535";
    return false;
  }
  out->host = std::string(host);
  out->port = static_cast<uint16_t>(value);
  return true;
}

uint16_t freeLoopbackPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return 0;
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  uint16_t port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  ::close(fd);
  return port;
}

bool redisCall(const Endpoint& ep, const std::vector<std::string>& argv, std::string* reply,
               std::string* error, int timeout_ms) {
  const timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  redisContext* c = redisConnectWithTimeout(ep.host.c_str(), ep.port, tv);
  if (c == nullptr || c->err) {
    *error = "cannot connect to " + ep.text() + ": " + (c ? c->errstr : "out of memory");
    if (c != nullptr) {
      redisFree(c);
    }
    return false;
  }
  redisSetTimeout(c, tv);
  std::vector<const char*> args;
  std::vector<size_t> lens;
  for (const auto& a : argv) {
    args.push_back(a.data());
    lens.push_back(a.size());
  }
  auto* r = static_cast<redisReply*>(
      redisCommandArgv(c, static_cast<int>(args.size()), args.data(), lens.data()));
  bool ok = false;
  if (r == nullptr) {
    *error = ep.text() + ": " + c->errstr;
  } else if (r->type == REDIS_REPLY_ERROR) {
    *error = ep.text() + ": " + std::string(r->str, r->len);
  } else {
    *reply = render(r);
    ok = true;
  }
  if (r != nullptr) {
    freeReplyObject(r);
  }
  redisFree(c);
  return ok;
}

std::string infoValue(std::string_view info, std::string_view key) {
  size_t pos = 0;
  while (pos < info.size()) {
    size_t end = info.find('\n', pos);
    if (end == std::string_view::npos) {
      end = info.size();
    }
    std::string_view line = info.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') {
      line.remove_suffix(1);
    }
    if (line.size() > key.size() && line.substr(0, key.size()) == key && line[key.size()] == ':') {
      return std::string(line.substr(key.size() + 1));
    }
    pos = end + 1;
  }
  return "";
}

long processRssKb(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) {
      return std::strtol(line.c_str() + 6, nullptr, 10);
    }
  }
  return -1;
}

std::string defaultProxyBinary() {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) {
    return "";
  }
  const auto dir = self.parent_path();
  for (const auto& candidate : {dir.parent_path() / "proxy" / "shardproxy", dir / "shardproxy"}) {
    if (::access(candidate.c_str(), X_OK) == 0) {
      return candidate.string();
    }
  }
  return "";
}

std::unique_ptr<LocalServer> startRedis(const std::string& binary, const std::string& name,
                                        const std::string& log_dir, std::string* error,
                                        const CpuList& cpus) {
  std::string why;
  for (int attempt = 0; attempt < 3; ++attempt) {
    Endpoint ep;
    ep.port = freeLoopbackPort();
    const std::vector<std::string> argv = {binary,
                                           "--port",
                                           std::to_string(ep.port),
                                           "--bind",
                                           "127.0.0.1",
                                           "--save",
                                           "",
                                           "--appendonly",
                                           "no",
                                           "--daemonize",
                                           "no",
                                           "--protected-mode",
                                           "no",
                                           "--dir",
                                           log_dir,
                                           "--dbfilename",
                                           name + ".rdb",
                                           "--maxclients",
                                           "100000",
                                           "--loglevel",
                                           "warning"};
    auto process = ChildProcess::start(argv, log_dir + "/" + name + ".log", error, cpus);
    if (process == nullptr) {
      return nullptr;
    }
    if (waitForPing(ep, *process, std::chrono::seconds(10), &why)) {
      return std::make_unique<LocalServer>(name, ep, std::move(process));
    }
    why = failure("redis-server " + name, why, *process);
    process->stop();  // a port taken between freeLoopbackPort and bind: try another
  }
  *error = why;
  return nullptr;
}

std::unique_ptr<LocalServer> startProxy(const std::string& binary, const std::string& name,
                                        const std::vector<Endpoint>& shards, int workers,
                                        const std::vector<std::string>& extra_args,
                                        const std::string& log_dir, std::string* error,
                                        const CpuList& cpus) {
  std::string list;
  for (const auto& s : shards) {
    if (!list.empty()) {
      list += ',';
    }
    list += s.text();
  }
  Endpoint ep;
  ep.port = freeLoopbackPort();
  std::vector<std::string> argv = {binary,
                                   "--listen",
                                   "127.0.0.1",
                                   "--port",
                                   std::to_string(ep.port),
                                   "--workers",
                                   std::to_string(workers),
                                   "--shards",
                                   list};
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  auto process = ChildProcess::start(argv, log_dir + "/" + name + ".log", error, cpus);
  if (process == nullptr) {
    *error = "shardproxy " + name + " failed to start: " + *error;
    return nullptr;
  }
  std::string why;
  if (!waitForPing(ep, *process, std::chrono::seconds(15), &why) ||
      !waitForShards(ep, *process, std::chrono::seconds(15), &why)) {
    *error = failure("shardproxy " + name, why, *process);
    process->stop();
    return nullptr;
  }
  return std::make_unique<LocalServer>(name, ep, std::move(process));
}

std::unique_ptr<LocalServer> startTwemproxy(const std::string& binary, const std::string& name,
                                            const std::vector<Endpoint>& shards,
                                            const std::string& log_dir, std::string* error,
                                            const CpuList& cpus) {
  Endpoint ep;
  ep.port = freeLoopbackPort();
  const uint16_t stats_port = freeLoopbackPort();
  const std::string conf = log_dir + "/" + name + ".yml";
  {
    std::ofstream out(conf);
    out << "shardbench:\n"
        << "  listen: 127.0.0.1:" << ep.port << "\n"
        << "  hash: crc16\n  hash_tag: \"{}\"\n  distribution: modula\n  redis: true\n"
        << "  server_connections: 1\n  auto_eject_hosts: false\n  preconnect: true\n"
        << "  timeout: 10000\n  servers:\n";
    for (size_t i = 0; i < shards.size(); ++i) {
      out << "   - " << shards[i].text() << ":1 shard" << i << "\n";
    }
    if (!out) {
      *error = "cannot write " + conf;
      return nullptr;
    }
  }
  const std::vector<std::string> argv = {binary,
                                         "-c",
                                         conf,
                                         "-a",
                                         "127.0.0.1",
                                         "-s",
                                         std::to_string(stats_port),
                                         "-o",
                                         log_dir + "/" + name + ".log"};
  auto process = ChildProcess::start(argv, log_dir + "/" + name + ".out", error, cpus);
  if (process == nullptr) {
    *error = "twemproxy " + name + " failed to start: " + *error;
    return nullptr;
  }
  std::string why;
  if (!waitForShards(ep, *process, std::chrono::seconds(15), &why)) {
    *error = failure("twemproxy " + name, why, *process);
    process->stop();
    return nullptr;
  }
  return std::make_unique<LocalServer>(name, ep, std::move(process));
}

std::optional<std::string> logWarningSummary(const std::string& log_dir, const std::string& name) {
  std::ifstream in(log_dir + "/" + name + ".log");
  std::string line;
  std::string first;
  size_t n = 0;
  while (std::getline(in, line)) {
    const bool bad = line.find("[warning]") != std::string::npos ||
                     line.find("[error]") != std::string::npos ||
                     line.find("[critical]") != std::string::npos;
    if (bad && n++ == 0) {
      first = line.substr(0, 300);
    }
  }
  if (n == 0) {
    return std::nullopt;
  }
  return name + " logged " + std::to_string(n) + " warning or error line(s) (logs/" + name +
         ".log); the first: " + first;
}

bool flushAll(const std::vector<Endpoint>& servers, std::string* error) {
  std::string reply;
  for (const auto& s : servers) {
    if (!redisCall(s, {"FLUSHALL"}, &reply, error, 30000)) {
      return false;
    }
  }
  return true;
}

}  // namespace sp::bench
