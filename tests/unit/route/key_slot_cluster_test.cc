// Checks route::keySlot against a real Redis: starts `redis-server --cluster-enabled yes` on a
// free loopback port and compares CLUSTER KEYSLOT for 10,000 random keys, a fifth of them with
// random hash tags (empty tags, nested braces, binary bytes). Fails, never skips, when
// redis-server cannot be started.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "route/key_slot.h"

namespace sp::route {
namespace {

// A port that was free on 127.0.0.1 a moment ago: bind port 0, read it back, close.
uint16_t freeLoopbackPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) {
    return 0;
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  uint16_t port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  ::close(fd);
  return port;
}

struct RedisContextDeleter {
  void operator()(redisContext* c) const { redisFree(c); }
};
using RedisContextPtr = std::unique_ptr<redisContext, RedisContextDeleter>;

struct ReplyDeleter {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using ReplyPtr = std::unique_ptr<redisReply, ReplyDeleter>;

// One redis-server child in cluster mode with its own temp dir; stopped by PID and the dir
// removed when the object goes away, whatever the test outcome.
class ClusterRedis {
 public:
  ClusterRedis() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "sp_keyslot_XXXXXX").string();
    if (::mkdtemp(tmpl.data()) != nullptr) {
      dir_ = tmpl;
    }
  }
  ~ClusterRedis() {
    stop();
    if (!dir_.empty()) {
      std::error_code ignored;
      std::filesystem::remove_all(dir_, ignored);
    }
  }
  ClusterRedis(const ClusterRedis&) = delete;
  ClusterRedis& operator=(const ClusterRedis&) = delete;

  // Starts redis-server on a free port and connects; a few ports are tried in case another
  // process takes the free port first. The cluster bus gets a free port of its own: by default it
  // is the port + 10000, past 65535 for a fifth of the kernel's ephemeral range (redis-server
  // then exits), and not known to be free.
  bool start(std::string* why) {
    if (dir_.empty()) {
      *why = "cannot create a temp dir";
      return false;
    }
    for (int attempt = 0; attempt < 5; ++attempt) {
      port_ = freeLoopbackPort();
      bus_port_ = freeLoopbackPort();
      if (port_ == 0 || bus_port_ == 0 || bus_port_ == port_) {
        *why = "cannot find a free port";
        continue;
      }
      if (spawn(why) && connect(why)) {
        return true;
      }
      stop();
    }
    *why += "\nredis-server log:\n" + log();
    return false;
  }

  redisContext* context() { return ctx_.get(); }

 private:
  bool spawn(std::string* why) {
    const std::string port = std::to_string(port_);
    const std::string nodes = dir_ + "/nodes.conf";
    std::filesystem::remove(nodes);  // left by an earlier attempt on another port
    const std::string logfile = dir_ + "/redis.log";
    std::vector<std::string> args = {SP_REDIS_SERVER,
                                     "--port",
                                     port,
                                     "--bind",
                                     "127.0.0.1",
                                     "--cluster-enabled",
                                     "yes",
                                     "--cluster-port",
                                     std::to_string(bus_port_),
                                     "--cluster-config-file",
                                     nodes,
                                     "--dir",
                                     dir_,
                                     "--save",
                                     "",
                                     "--appendonly",
                                     "no",
                                     "--daemonize",
                                     "no",
                                     "--logfile",
                                     logfile};
    std::vector<char*> argv;
    for (std::string& a : args) {
      argv.push_back(a.data());
    }
    argv.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ < 0) {
      *why = "fork failed";
      return false;
    }
    if (pid_ == 0) {
      const int out = ::open((dir_ + "/stdout.log").c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (out >= 0) {
        ::dup2(out, 1);
        ::dup2(out, 2);
      }
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    return true;
  }

  bool connect(std::string* why) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        *why = "redis-server exited (status " + std::to_string(status) + ")";
        return false;
      }
      timeval timeout{1, 0};
      RedisContextPtr ctx(redisConnectWithTimeout("127.0.0.1", port_, timeout));
      if (ctx && ctx->err == 0) {
        ReplyPtr pong(static_cast<redisReply*>(redisCommand(ctx.get(), "PING")));
        if (pong && pong->type == REDIS_REPLY_STATUS) {
          ctx_ = std::move(ctx);
          return true;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    *why = "redis-server did not accept connections on port " + std::to_string(port_);
    return false;
  }

  void stop() {
    ctx_.reset();
    if (pid_ <= 0) {
      return;
    }
    ::kill(pid_, SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    int status = 0;
    while (::waitpid(pid_, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    pid_ = -1;
  }

  std::string log() const {
    std::string out;
    for (const char* name : {"/redis.log", "/stdout.log"}) {
      std::ifstream in(dir_ + name);
      std::stringstream text;
      text << in.rdbuf();
      out += text.str();
    }
    return out;
  }

  std::string dir_;
  uint16_t port_ = 0;
  uint16_t bus_port_ = 0;
  pid_t pid_ = -1;
  RedisContextPtr ctx_;
};

std::string randomBytes(std::mt19937& rng, size_t max_len) {
  std::uniform_int_distribution<size_t> len(0, max_len);
  std::uniform_int_distribution<int> kind(0, 9);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_int_distribution<int> printable('a', 'z');
  std::string out(len(rng), '\0');
  for (char& c : out) {
    const int k = kind(rng);
    // Mostly letters, some braces (so unplanned tags appear too) and some arbitrary bytes.
    c = static_cast<char>(k < 6 ? printable(rng) : k == 6 ? '{' : k == 7 ? '}' : byte(rng));
  }
  return out;
}

// A key with a deliberate hash tag: prefix{tag}suffix, where the tag may be empty, contain
// braces ({{a}}, {a{b}}) or binary bytes.
std::string taggedKey(std::mt19937& rng) {
  std::uniform_int_distribution<int> shape(0, 5);
  std::string tag;
  switch (shape(rng)) {
    case 0:
      break;  // empty tag: the whole key is hashed
    case 1:
      tag = "{" + randomBytes(rng, 6);  // nested opening brace
      break;
    case 2:
      tag = randomBytes(rng, 6) + "}";  // tag ends early: "{x}}"
      break;
    default:
      tag = randomBytes(rng, 12);
      break;
  }
  return randomBytes(rng, 8) + "{" + tag + "}" + randomBytes(rng, 8);
}

TEST(KeySlotClusterTest, MatchesClusterKeyslotForRandomKeys) {
  ClusterRedis redis;
  std::string why;
  ASSERT_TRUE(redis.start(&why)) << "cannot start " << SP_REDIS_SERVER << ": " << why;

  std::mt19937 rng(20240611);
  std::uniform_int_distribution<int> fifth(0, 4);
  std::vector<std::string> keys = {
      "",           "foo",           "bar",           "hello", "{user1000}.following",
      "foo{}{bar}", "foo{{bar}}zap", "foo{bar}{zap}", "{",     "}",
      "{}"};
  keys.push_back(std::string("\0\xff{\0}", 5));
  while (keys.size() < 10000) {
    keys.push_back(fifth(rng) == 0 ? taggedKey(rng) : randomBytes(rng, 40));
  }

  constexpr size_t kBatch = 500;  // pipelined
  size_t mismatches = 0;
  for (size_t begin = 0; begin < keys.size(); begin += kBatch) {
    const size_t end = std::min(keys.size(), begin + kBatch);
    for (size_t i = begin; i < end; ++i) {
      ASSERT_EQ(
          redisAppendCommand(redis.context(), "CLUSTER KEYSLOT %b", keys[i].data(), keys[i].size()),
          REDIS_OK);
    }
    for (size_t i = begin; i < end; ++i) {
      void* raw = nullptr;
      ASSERT_EQ(redisGetReply(redis.context(), &raw), REDIS_OK) << redis.context()->errstr;
      ReplyPtr reply(static_cast<redisReply*>(raw));
      ASSERT_EQ(reply->type, REDIS_REPLY_INTEGER) << (reply->str ? reply->str : "");
      if (reply->integer != keySlot(keys[i])) {
        ++mismatches;
        std::string hex;
        for (unsigned char c : keys[i]) {
          static const char kDigits[] = "0123456789abcdef";
          hex += kDigits[c >> 4];
          hex += kDigits[c & 15];
        }
        ADD_FAILURE() << "key #" << i << " (hex " << hex << "): redis " << reply->integer
                      << ", keySlot " << keySlot(keys[i]);
        ASSERT_LT(mismatches, 20u) << "too many mismatches";
      }
    }
  }
  EXPECT_EQ(mismatches, 0u);
}

}  // namespace
}  // namespace sp::route
