// ScriptedShard: one fake Redis server on loopback for tests of the shard connections, served by
// its own thread. It records every command it reads, in order over all its connections, and
// answers each as the test's script says: the reply (written in one piece, or in parts a few
// milliseconds apart), nothing (a shard that swallows the command), or a hang-up. It reads RESP
// arrays of bulk strings only, which is all a shard connection sends.
#pragma once

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "net/listener.h"

namespace sp::fakes {

class ScriptedShard {
 public:
  struct Answer {
    std::vector<std::string> parts;  // written in order, 20 ms apart; none: no answer
    bool hang_up = false;            // close the connection instead (after the parts)
  };
  using Argv = std::vector<std::string>;
  using Script = std::function<Answer(const Argv& argv)>;

  static Answer reply(std::string bytes) { return Answer{{std::move(bytes)}, false}; }
  static Answer hangUp() { return Answer{{}, true}; }

  explicit ScriptedShard(Script script) : script_(std::move(script)) {
    if (!net::bindListenSocket("127.0.0.1", 0, &port_, &fd_).ok() || ::listen(fd_, 16) != 0) {
      std::abort();  // a test machine without loopback
    }
    thread_ = std::thread([this] { serve(); });
  }
  ~ScriptedShard() {
    stop_ = true;
    thread_.join();
    for (const Conn& c : conns_) {
      if (c.fd >= 0) {
        ::close(c.fd);
      }
    }
    ::close(fd_);
  }
  ScriptedShard(const ScriptedShard&) = delete;
  ScriptedShard& operator=(const ScriptedShard&) = delete;

  uint16_t port() const { return port_; }
  std::vector<Argv> commands() const {
    std::lock_guard lock(mu_);
    std::vector<Argv> all;
    for (const auto& [conn, argv] : commands_) {
      all.push_back(argv);
    }
    return all;
  }
  // The commands read on the conn-th connection accepted (from 0).
  std::vector<Argv> commandsOn(size_t conn) const {
    std::lock_guard lock(mu_);
    std::vector<Argv> on;
    for (const auto& [c, argv] : commands_) {
      if (c == conn) {
        on.push_back(argv);
      }
    }
    return on;
  }
  size_t connectionsAccepted() const { return accepted_.load(); }
  // Waits up to 10 s until `n` commands have been read.
  bool waitForCommands(size_t n) const {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (commands().size() < n) {
      if (std::chrono::steady_clock::now() > deadline) {
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return true;
  }

  // One command from the front of `in`: its argv and the bytes it took; 0 when incomplete (or not
  // an array of bulk strings, which a shard connection never sends).
  static size_t parse(std::string_view in, Argv* argv) {
    argv->clear();
    size_t at = 0;
    auto number = [&](char prefix, long* out) {
      if (at >= in.size() || in[at] != prefix) {
        return false;
      }
      const size_t end = in.find("\r\n", at);
      if (end == std::string_view::npos) {
        return false;
      }
      *out = std::strtol(std::string(in.substr(at + 1, end - at - 1)).c_str(), nullptr, 10);
      at = end + 2;
      return true;
    };
    long count = 0;
    if (!number('*', &count)) {
      return 0;
    }
    for (long i = 0; i < count; ++i) {
      long len = 0;
      if (!number('$', &len) || len < 0 || at + static_cast<size_t>(len) + 2 > in.size()) {
        return 0;
      }
      argv->emplace_back(in.substr(at, static_cast<size_t>(len)));
      at += static_cast<size_t>(len) + 2;
    }
    return at;
  }

 private:
  struct Conn {
    int fd;
    size_t index;  // in accept order
    std::string in;
  };

  void serve() {
    while (!stop_) {
      std::vector<pollfd> fds{{fd_, POLLIN, 0}};
      for (const Conn& c : conns_) {
        fds.push_back({c.fd, static_cast<short>(c.fd >= 0 ? POLLIN : 0), 0});
      }
      if (::poll(fds.data(), fds.size(), 10) <= 0) {
        continue;
      }
      if ((fds[0].revents & POLLIN) != 0) {
        const int c = ::accept(fd_, nullptr, nullptr);
        if (c >= 0) {
          conns_.push_back({c, conns_.size(), {}});
          ++accepted_;
        }
      }
      for (size_t i = 1; i < fds.size(); ++i) {
        if ((fds[i].revents & (POLLIN | POLLHUP)) != 0) {
          onReadable(conns_[i - 1]);
        }
      }
    }
  }

  void onReadable(Conn& conn) {
    char buf[4096];
    const ssize_t n = ::read(conn.fd, buf, sizeof buf);
    if (n <= 0) {
      ::close(conn.fd);
      conn.fd = -1;
      return;
    }
    conn.in.append(buf, static_cast<size_t>(n));
    Argv argv;
    for (size_t used = parse(conn.in, &argv); used > 0 && conn.fd >= 0;
         used = parse(conn.in, &argv)) {
      conn.in.erase(0, used);
      {
        std::lock_guard lock(mu_);
        commands_.emplace_back(conn.index, argv);
      }
      const Answer answer = script_(argv);
      for (size_t p = 0; p < answer.parts.size(); ++p) {
        if (p > 0) {
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        const std::string& part = answer.parts[p];
        if (::send(conn.fd, part.data(), part.size(), MSG_NOSIGNAL) !=
            static_cast<ssize_t>(part.size())) {
          break;
        }
      }
      if (answer.hang_up) {
        ::close(conn.fd);
        conn.fd = -1;
      }
    }
  }

  Script script_;
  int fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<size_t> accepted_{0};
  std::vector<Conn> conns_;  // the serving thread's
  mutable std::mutex mu_;
  std::vector<std::pair<size_t, Argv>> commands_;  // (connection, argv), guarded by mu_
  std::thread thread_;
};

}  // namespace sp::fakes
