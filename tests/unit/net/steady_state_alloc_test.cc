// No allocation in steady state: a worker relaying a warmed-up pipeline between a client and a
// fake shard performs zero operator new calls. The fake shard and the client use fixed buffers
// and raw syscalls, so any allocation counted in the measured window is the proxy's.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>
#include <thread>

#include "fakes/fake_control_plane.h"
#include "net/listener.h"
#include "net/proxy_context.h"
#include "net/worker.h"
#include "resp/reply_scanner.h"
#include "session/worker_clients.h"

namespace {

std::atomic<bool> g_counting{false};
std::atomic<uint64_t> g_allocations{0};

}  // namespace

// Replacing the global allocation functions is what counting needs; GCC cannot see that the
// pairs match.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(size_t size) {
  if (g_counting.load(std::memory_order_relaxed)) {
    g_allocations.fetch_add(1, std::memory_order_relaxed);
  }
  void* p = std::malloc(size == 0 ? 1 : size);
  if (p == nullptr) {
    throw std::bad_alloc();
  }
  return p;
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop

namespace sp::net {
namespace {

// A shard that answers PING with +PONG and every other command with "$1\r\nv\r\n".
class FakeShard {
 public:
  FakeShard() {
    const Status bound = bindListenSocket("127.0.0.1", 0, &port_, &listen_fd_);
    EXPECT_TRUE(bound.ok()) << bound.message();
    ::listen(listen_fd_, 16);
    thread_ = std::thread([this] { serve(); });
  }
  ~FakeShard() {
    stop_ = true;
    thread_.join();
    ::close(listen_fd_);
  }
  uint16_t port() const { return port_; }

 private:
  void serve() {
    int fd = -1;
    while (!stop_ && fd < 0) {
      pollfd p{listen_fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) > 0) {
        fd = ::accept(listen_fd_, nullptr, nullptr);
      }
    }
    static char in[1 << 16];
    static char out[1 << 17];
    size_t have = 0;
    resp::ReplyScanner scanner;
    while (!stop_ && fd >= 0) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) {
        continue;
      }
      ssize_t n = ::read(fd, in + have, sizeof(in) - have);
      if (n <= 0) {
        break;
      }
      have += static_cast<size_t>(n);
      size_t off = 0;
      size_t out_len = 0;
      for (;;) {
        size_t consumed = 0;
        resp::ReplyInfo info;
        if (scanner.scan(std::string_view(in + off, have - off), &consumed, &info) !=
            resp::ParseStatus::kOk) {
          break;
        }
        const bool ping = consumed == 14 && std::memcmp(in + off + 8, "PING", 4) == 0;
        const char* reply = ping ? "+PONG\r\n" : "$1\r\nv\r\n";
        std::memcpy(out + out_len, reply, 7);
        out_len += 7;
        off += consumed;
      }
      std::memmove(in, in + off, have - off);
      have -= off;
      if (out_len > 0 && ::write(fd, out, out_len) != static_cast<ssize_t>(out_len)) {
        break;
      }
    }
    if (fd >= 0) {
      ::close(fd);
    }
  }

  int listen_fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

int connectTo(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  for (int i = 0; i < 200; ++i) {
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
      int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      return fd;
    }
    ::usleep(10000);
  }
  return -1;
}

// Sends `depth` pipelined GETs and reads their `depth` 7-byte replies; false on any mismatch.
bool pipelineRound(int fd, int depth) {
  static const char kGet[] = "*2\r\n$3\r\nGET\r\n$8\r\nkey:0001\r\n";
  static char out[64 * 1024];
  static char in[64 * 1024];
  const size_t len = sizeof(kGet) - 1;
  for (int i = 0; i < depth; ++i) {
    std::memcpy(out + i * len, kGet, len);
  }
  if (::write(fd, out, len * depth) != static_cast<ssize_t>(len * depth)) {
    return false;
  }
  size_t want = 7u * static_cast<size_t>(depth);
  size_t got = 0;
  while (got < want) {
    ssize_t n = ::read(fd, in + got, want - got);
    if (n <= 0) {
      return false;
    }
    got += static_cast<size_t>(n);
  }
  for (int i = 0; i < depth; ++i) {
    if (std::memcmp(in + i * 7, "$1\r\nv\r\n", 7) != 0) {
      return false;
    }
  }
  return true;
}

TEST(SteadyStateAllocTest, WarmedUpPipelineAllocatesNothing) {
  FakeShard shard;
  fakes::FakeControlPlane control;
  ProxyContext context;
  context.control = &control;
  config::ShardConfig shard_config;
  shard_config.name = "s0";
  shard_config.host = "127.0.0.1";
  shard_config.port = shard.port();
  auto config = std::make_shared<config::Config>();
  config->shards.push_back(shard_config);
  context.publish(config, route::Topology::evenSplit({{"s0", "127.0.0.1", shard.port()}}));
  uint16_t port = 0;
  int fd = -1;
  const Status bound = bindListenSocket("127.0.0.1", 0, &port, &fd);
  ASSERT_TRUE(bound.ok()) << bound.message();
  Worker worker(0, context, std::vector<ListenSocket>{{fd}}, session::buildWorkerParts);
  context.workers.push_back(&worker);
  worker.startThread();
  worker.startAccepting();

  int client = connectTo(port);
  ASSERT_GE(client, 0);
  // Warm up for longer than the worker's 1-second timers (backend pings, buffer trim), so that
  // each has fired at least once while requests were in flight: the measured window may span
  // such a firing when the machine is slow (a sanitizer build beside other jobs).
  const auto warm_until = std::chrono::steady_clock::now() + std::chrono::milliseconds(1200);
  for (int i = 0; i < 200 || std::chrono::steady_clock::now() < warm_until; ++i) {
    ASSERT_TRUE(pipelineRound(client, 100));
  }
  g_allocations = 0;
  g_counting = true;
  bool ok = true;
  for (int i = 0; i < 500 && ok; ++i) {
    ok = pipelineRound(client, 100);
  }
  g_counting = false;
  EXPECT_TRUE(ok);
  EXPECT_EQ(g_allocations.load(), 0u) << "operator new calls during 50,000 relayed requests";

  ::close(client);
  worker.requestStop();
  worker.join();
}

}  // namespace
}  // namespace sp::net
