// FakeShards: see fake_shards.h.
#include "fakes/fake_shards.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <set>

#include "core/ascii.h"

namespace sp::fakes {
namespace {

void appendBulk(std::string* out, std::string_view s) {
  out->append("$").append(std::to_string(s.size())).append("\r\n").append(s).append("\r\n");
}

void appendArray(std::string* out, size_t n) {
  out->append("*").append(std::to_string(n)).append("\r\n");
}

void appendInt(std::string* out, int64_t n) {
  out->append(":").append(std::to_string(n)).append("\r\n");
}

bool isIn(std::string_view name, std::initializer_list<std::string_view> names) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// One multibulk command from the front of `in`: 1 parsed (argv filled, *consumed set), 0 more
// bytes needed, -1 not a multibulk command (the proxy sends nothing else to a shard).
int parseCommand(std::string_view in, size_t* consumed, std::vector<std::string>* argv) {
  argv->clear();
  if (in.empty()) {
    return 0;
  }
  if (in[0] != '*') {
    return -1;
  }
  size_t pos = 1;
  auto readNumber = [&](int64_t* n) -> int {
    const size_t eol = in.find("\r\n", pos);
    if (eol == std::string_view::npos) {
      return 0;
    }
    auto [ptr, ec] = std::from_chars(in.data() + pos, in.data() + eol, *n);
    if (ec != std::errc() || ptr != in.data() + eol) {
      return -1;
    }
    pos = eol + 2;
    return 1;
  };
  int64_t count = 0;
  if (int r = readNumber(&count); r <= 0) {
    return r;
  }
  if (count < 1 || count > 1024 * 1024) {
    return -1;
  }
  for (int64_t i = 0; i < count; ++i) {
    if (pos >= in.size()) {
      return 0;
    }
    if (in[pos] != '$') {
      return -1;
    }
    ++pos;
    int64_t len = 0;
    if (int r = readNumber(&len); r <= 0) {
      return r;
    }
    if (len < 0) {
      return -1;
    }
    if (in.size() < pos + static_cast<size_t>(len) + 2) {
      return 0;
    }
    argv->emplace_back(in.substr(pos, static_cast<size_t>(len)));
    pos += static_cast<size_t>(len) + 2;
  }
  *consumed = pos;
  return 1;
}

}  // namespace

struct FakeShards::Conn {
  int fd = -1;
  uint16_t shard = 0;
  std::string in;
  std::string out;
  bool multi = false;
  std::vector<std::string> queued;  // replies for EXEC
  std::set<std::string> channels;
  std::set<std::string> patterns;
};

FakeShards::FakeShards(size_t count, ViolationHandler on_violation)
    : on_violation_(std::move(on_violation)) {
  std::vector<route::ShardAddress> addresses;
  for (size_t i = 0; i < count; ++i) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        ::listen(fd, 128) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      violation("fake shard: cannot listen on 127.0.0.1: errno " + std::to_string(errno));
      return;
    }
    listen_fds_.push_back(fd);
    ports_.push_back(ntohs(addr.sin_port));
    addresses.emplace_back("s" + std::to_string(i), "127.0.0.1", ports_.back());
  }
  topology_ = route::Topology::evenSplit(std::move(addresses));
  thread_ = std::thread([this] { serve(); });
}

FakeShards::~FakeShards() {
  stop_ = true;
  if (thread_.joinable()) {
    thread_.join();
  }
  for (int fd : listen_fds_) {
    ::close(fd);
  }
  for (auto& conn : conns_) {
    ::close(conn->fd);
  }
}

void FakeShards::violation(const std::string& what) {
  if (on_violation_) {
    on_violation_(what);
  }
}

std::vector<std::string_view> FakeShards::keysOf(const std::vector<std::string>& argv) {
  std::vector<std::string_view> keys;
  if (argv.empty()) {
    return keys;
  }
  const std::string name = upperAscii(argv[0]);
  if (isIn(name, {"GET",   "SET",   "INCR",  "APPEND", "STRLEN", "HGET", "HSET",
                  "LPUSH", "RPUSH", "LPOP",  "SADD",   "SCARD",  "ZADD", "EXPIRE",
                  "TTL",   "TYPE",  "SETNX", "DECR",   "INCRBY", "LLEN"}) &&
      argv.size() > 1) {
    keys.push_back(argv[1]);
  } else if (isIn(name,
                  {"MGET", "DEL", "EXISTS", "UNLINK", "TOUCH", "WATCH", "SUNION", "SINTER"})) {
    for (size_t i = 1; i < argv.size(); ++i) {
      keys.push_back(argv[i]);
    }
  } else if (name == "MSET") {
    for (size_t i = 1; i < argv.size(); i += 2) {
      keys.push_back(argv[i]);
    }
  } else if (isIn(name, {"BLPOP", "BRPOP"})) {
    for (size_t i = 1; i + 1 < argv.size(); ++i) {
      keys.push_back(argv[i]);
    }
  } else if (isIn(name, {"EVAL", "EVALSHA", "FCALL"}) && argv.size() > 2) {
    size_t numkeys = 0;
    std::from_chars(argv[2].data(), argv[2].data() + argv[2].size(), numkeys);
    for (size_t i = 3; i < argv.size() && i < 3 + numkeys; ++i) {
      keys.push_back(argv[i]);
    }
  }
  return keys;
}

void FakeShards::serve() {
  std::vector<pollfd> fds;
  while (!stop_.load()) {
    fds.clear();
    for (int fd : listen_fds_) {
      fds.push_back({fd, POLLIN, 0});
    }
    for (auto& conn : conns_) {
      fds.push_back({conn->fd, static_cast<short>(POLLIN | (conn->out.empty() ? 0 : POLLOUT)), 0});
    }
    if (::poll(fds.data(), fds.size(), 20) <= 0) {
      continue;
    }
    for (size_t i = 0; i < listen_fds_.size(); ++i) {
      if ((fds[i].revents & POLLIN) == 0) {
        continue;
      }
      for (;;) {
        int fd = ::accept4(listen_fds_[i], nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
          break;
        }
        auto conn = std::make_unique<Conn>();
        conn->fd = fd;
        conn->shard = static_cast<uint16_t>(i);
        conns_.push_back(std::move(conn));
      }
    }
    // Connections accepted above have no pollfd yet; only those polled are served this turn.
    const size_t polled = fds.size() - listen_fds_.size();
    for (size_t i = 0; i < polled; ++i) {
      Conn& conn = *conns_[i];
      const short revents = fds[listen_fds_.size() + i].revents;
      if ((revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
        onReadable(conn);
      }
      while (conn.fd >= 0 && !conn.out.empty()) {
        ssize_t n = ::send(conn.fd, conn.out.data(), conn.out.size(), MSG_NOSIGNAL);
        if (n <= 0) {
          if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            break;
          }
          ::close(conn.fd);
          conn.fd = -1;
          break;
        }
        conn.out.erase(0, static_cast<size_t>(n));
      }
    }
    std::erase_if(conns_, [](const std::unique_ptr<Conn>& c) { return c->fd < 0; });
  }
}

void FakeShards::onReadable(Conn& conn) {
  char buf[64 * 1024];
  for (;;) {
    ssize_t n = ::recv(conn.fd, buf, sizeof(buf), 0);
    if (n > 0) {
      conn.in.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      break;
    }
    ::close(conn.fd);  // the proxy closed it
    conn.fd = -1;
    return;
  }
  std::vector<std::string> argv;
  size_t offset = 0;
  for (;;) {
    size_t consumed = 0;
    const int r = parseCommand(std::string_view(conn.in).substr(offset), &consumed, &argv);
    if (r == 0) {
      break;
    }
    if (r < 0) {
      violation("shard " + std::to_string(conn.shard) +
                " was sent a malformed command: " + conn.in.substr(offset, 64));
      conn.in.clear();
      return;
    }
    offset += consumed;
    served_.fetch_add(1, std::memory_order_relaxed);
    answer(conn, argv);
  }
  conn.in.erase(0, offset);
}

void FakeShards::answer(Conn& conn, const std::vector<std::string>& argv) {
  for (std::string_view key : keysOf(argv)) {
    const uint16_t owner = topology_->shardOfKey(key);
    if (owner != conn.shard) {
      std::string text = "shard " + std::to_string(conn.shard) + " was sent '";
      for (const std::string& a : argv) {
        text += a + " ";
      }
      violation(text + "' but key '" + std::string(key) + "' belongs to shard " +
                std::to_string(owner));
    }
  }
  const std::string name = upperAscii(argv[0]);
  const bool control = isIn(name, {"MULTI", "EXEC", "DISCARD", "WATCH", "RESET", "SUBSCRIBE",
                                   "UNSUBSCRIBE", "PSUBSCRIBE", "PUNSUBSCRIBE"});
  if (conn.multi && !control) {
    conn.queued.push_back(replyFor(conn, argv));
    conn.out.append("+QUEUED\r\n");
    return;
  }
  conn.out.append(replyFor(conn, argv));
}

std::string FakeShards::replyFor(Conn& conn, const std::vector<std::string>& argv) {
  const std::string name = upperAscii(argv[0]);
  const std::string tag = "s" + std::to_string(conn.shard) + "|";
  std::string out;
  const bool subscribed = !conn.channels.empty() || !conn.patterns.empty();
  if (name == "PING") {
    if (subscribed) {
      appendArray(&out, 2);
      appendBulk(&out, "pong");
      appendBulk(&out, argv.size() > 1 ? argv[1] : "");
      return out;
    }
    if (argv.size() > 1) {
      appendBulk(&out, argv[1]);
      return out;
    }
    return "+PONG\r\n";
  }
  if (name == "ECHO" && argv.size() == 2) {
    appendBulk(&out, argv[1]);
    return out;
  }
  if (name == "DBSIZE") {
    return ":1\r\n";
  }
  if (name == "MULTI") {
    if (conn.multi) {
      return "-ERR MULTI calls can not be nested\r\n";
    }
    conn.multi = true;
    return "+OK\r\n";
  }
  if (name == "EXEC" || name == "DISCARD") {
    if (!conn.multi) {
      return "-ERR " + name + " without MULTI\r\n";
    }
    conn.multi = false;
    std::vector<std::string> queued = std::move(conn.queued);
    conn.queued.clear();
    if (name == "DISCARD") {
      return "+OK\r\n";
    }
    appendArray(&out, queued.size());
    for (const std::string& r : queued) {
      out += r;
    }
    return out;
  }
  if (name == "WATCH" && conn.multi) {
    return "-ERR WATCH inside MULTI is not allowed\r\n";
  }
  if (isIn(name, {"WATCH", "UNWATCH", "SELECT", "READONLY", "READWRITE", "ASKING", "CLIENT"})) {
    return "+OK\r\n";
  }
  if (name == "RESET") {
    conn.multi = false;
    conn.queued.clear();
    conn.channels.clear();
    conn.patterns.clear();
    return "+RESET\r\n";
  }
  if (isIn(name, {"SUBSCRIBE", "PSUBSCRIBE", "UNSUBSCRIBE", "PUNSUBSCRIBE"})) {
    const bool pattern = name[0] == 'P';
    std::set<std::string>& set = pattern ? conn.patterns : conn.channels;
    std::string verb = name;
    for (char& c : verb) {
      c = lowerAscii(c);
    }
    auto confirm = [&](const std::string* channel) {
      appendArray(&out, 3);
      appendBulk(&out, verb);
      if (channel != nullptr) {
        appendBulk(&out, *channel);
      } else {
        out.append("$-1\r\n");
      }
      appendInt(&out, static_cast<int64_t>(conn.channels.size() + conn.patterns.size()));
    };
    if (name.find("UNSUB") == std::string::npos) {
      for (size_t i = 1; i < argv.size(); ++i) {
        set.insert(argv[i]);
        confirm(&argv[i]);
      }
      return out;
    }
    std::vector<std::string> names(argv.begin() + 1, argv.end());
    if (names.empty()) {
      names.assign(set.begin(), set.end());
      if (names.empty()) {
        confirm(nullptr);
        return out;
      }
    }
    for (const std::string& n : names) {
      set.erase(n);
      confirm(&n);
    }
    return out;
  }
  if (name == "HELLO" || name == "AUTH") {
    return "-ERR the fake shard speaks RESP2 without authentication\r\n";
  }
  std::string joined = tag;
  for (size_t i = 0; i < argv.size(); ++i) {
    joined += i == 0 ? "" : " ";
    joined += argv[i];
  }
  if (name == "MGET") {
    appendArray(&out, argv.size() - 1);
    for (size_t i = 1; i < argv.size(); ++i) {
      appendBulk(&out, tag + argv[i]);
    }
    return out;
  }
  if (isIn(name, {"DEL", "EXISTS", "UNLINK", "TOUCH"})) {
    appendInt(&out, static_cast<int64_t>(argv.size() - 1));
    return out;
  }
  if (name == "MSET") {
    return "+OK\r\n";
  }
  if ((name == "BLPOP" || name == "BRPOP") && argv.size() > 2) {
    appendArray(&out, 2);
    appendBulk(&out, argv[1]);
    appendBulk(&out, joined);
    return out;
  }
  appendBulk(&out, joined);
  return out;
}

}  // namespace sp::fakes
