// stream_socket.h's helpers on a bare libuv loop: where a read goes (the shared buffer under TLS,
// else the connection's own buffer grown to the minimum), the words a failed read is reported
// in, a TCP or Unix socket by the address's kind, and how a connect that cannot start, or that
// fails later, is reported, and the write step both connection kinds share.
#include "backend/stream_socket.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <uv.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "core/buffer.h"
#include "fakes/worker_harness.h"
#include "route/topology.h"

namespace sp::backend {
namespace {

TEST(ReadSpaceTest, UnderTlsTheReadGoesToTheSharedBufferAndTheOwnStaysUntouched) {
  char shared[64];
  Buffer in;
  const uv_buf_t buf = readSpace(true, uv_buf_init(shared, sizeof shared), in, 16 * 1024);
  EXPECT_EQ(buf.base, shared);
  EXPECT_EQ(buf.len, sizeof shared);
  EXPECT_EQ(in.capacity(), 0u);
}

TEST(ReadSpaceTest, PlainReadsGoToTheOwnBufferGrownToTheMinimum) {
  char shared[64];
  Buffer in;
  const uv_buf_t buf = readSpace(false, uv_buf_init(shared, sizeof shared), in, 16 * 1024);
  EXPECT_EQ(buf.base, in.writePtr());
  EXPECT_EQ(buf.len, in.writable());
  EXPECT_GE(buf.len, 16u * 1024);
}

TEST(ReadSpaceTest, APartReplyIsKeptAndTheReadGoesAfterIt) {
  char shared[64];
  Buffer in;
  in.append("$10\r\n01234");
  const uv_buf_t buf = readSpace(false, uv_buf_init(shared, sizeof shared), in, 16 * 1024);
  EXPECT_EQ(buf.base, in.readPtr() + 10);
  EXPECT_GE(buf.len, 16u * 1024);
  EXPECT_EQ(in.view(), "$10\r\n01234");
}

TEST(ReadFailureTest, EachFailedReadInTheWordsRequestsAreFailedWith) {
  EXPECT_EQ(readFailure(UV_EOF), "connection closed by the server");
  EXPECT_EQ(readFailure(UV_ENOBUFS), "out of memory for the reply");
  EXPECT_EQ(readFailure(UV_ECONNRESET), "connection reset by peer");  // libuv's own words
}

TEST(AppendAuthTest, APasswordAloneOrAUserAndItsPassword) {
  std::string out;
  appendAuth(out, "", "secret");
  EXPECT_EQ(out, "*2\r\n$4\r\nAUTH\r\n$6\r\nsecret\r\n");
  out.clear();
  appendAuth(out, "app", "pw");
  EXPECT_EQ(out, "*3\r\n$4\r\nAUTH\r\n$3\r\napp\r\n$2\r\npw\r\n");
}

TEST(MakeTlsChannelTest, NoContextMeansPlain) {
  EXPECT_EQ(makeTlsChannel(nullptr, route::ShardAddress("s0", "127.0.0.1", 6379)), nullptr);
  EXPECT_EQ(makeTlsChannel(nullptr, route::ShardAddress("s0", "/run/redis.sock", 0)), nullptr);
}

// A loop for one socket; the destructor closes what the test opened and runs the loop dry.
class SocketLoop {
 public:
  SocketLoop() { uv_loop_init(&loop_); }
  ~SocketLoop() {
    if (open_) {
      uv_close(&socket.handle, nullptr);
    }
    uv_run(&loop_, UV_RUN_DEFAULT);
    uv_loop_close(&loop_);
  }
  SocketLoop(const SocketLoop&) = delete;
  SocketLoop& operator=(const SocketLoop&) = delete;

  void init(const route::ShardAddress& address) {
    initStreamSocket(&loop_, address, &socket, this);
    open_ = true;
  }
  // Connects and runs the loop until the callback has the outcome; false when it could not start.
  bool connect(const route::ShardAddress& address, std::string* error) {
    req_.data = this;
    if (Status started = connectStreamSocket(address, &socket, &req_, &SocketLoop::onConnect);
        !started.ok()) {
      *error = started.message();
      return false;
    }
    uv_run(&loop_, UV_RUN_DEFAULT);
    return true;
  }

  StreamSocket socket{};
  int status = 1;  // the connect callback's; 1: not called

 private:
  static void onConnect(uv_connect_t* req, int status) {
    static_cast<SocketLoop*>(req->data)->status = status;
  }
  uv_loop_t loop_{};
  uv_connect_t req_{};
  bool open_ = false;
};

TEST(InitStreamSocketTest, AHostIsTcpAndAPathIsAUnixSocket) {
  SocketLoop tcp;
  tcp.init(route::ShardAddress("s0", "127.0.0.1", 6379));
  EXPECT_EQ(tcp.socket.handle.type, UV_TCP);
  EXPECT_EQ(tcp.socket.handle.data, &tcp);
  SocketLoop unix_socket;
  unix_socket.init(route::ShardAddress("s0", "/run/redis.sock", 0));
  EXPECT_EQ(unix_socket.socket.handle.type, UV_NAMED_PIPE);
  EXPECT_EQ(unix_socket.socket.handle.data, &unix_socket);
}

TEST(ConnectStreamSocketTest, AHostThatDoesNotResolveCannotStart) {
  const route::ShardAddress address("s0", "", 6379);  // no name: no lookup can succeed
  SocketLoop loop;
  loop.init(address);
  std::string error;
  EXPECT_FALSE(loop.connect(address, &error));
  EXPECT_EQ(error, "cannot resolve host");
  EXPECT_EQ(loop.status, 1) << "no callback for an attempt that never started";
}

TEST(ConnectStreamSocketTest, ARefusedTcpConnectIsReportedThroughTheCallback) {
  uint16_t port = 0;
  const int fd = fakes::boundLoopbackSocket(&port);  // bound, not listening: refused
  ASSERT_GE(fd, 0);
  const route::ShardAddress address("s0", "127.0.0.1", port);
  {
    SocketLoop loop;
    loop.init(address);
    std::string error;
    ASSERT_TRUE(loop.connect(address, &error)) << error;
    EXPECT_EQ(loop.status, UV_ECONNREFUSED);
    EXPECT_EQ(error, "");
  }
  ::close(fd);
}

TEST(ConnectStreamSocketTest, AMissingUnixSocketIsReportedThroughTheCallback) {
  const route::ShardAddress address("s0", "/nonexistent-dir/redis.sock", 0);
  SocketLoop loop;
  loop.init(address);
  std::string error;
  ASSERT_TRUE(loop.connect(address, &error)) << error;
  EXPECT_EQ(loop.status, UV_ENOENT);
}

TEST(ConnectStreamSocketTest, AListeningUnixSocketConnects) {
  char dir[] = "/tmp/sp-stream-socket-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/redis.sock";
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(fd, 4), 0);
  const route::ShardAddress address("s0", path, 0);
  {
    SocketLoop loop;
    loop.init(address);
    std::string error;
    ASSERT_TRUE(loop.connect(address, &error)) << error;
    EXPECT_EQ(loop.status, 0);
  }
  ::close(fd);
  ::unlink(path.c_str());
  ::rmdir(dir);
}

// writeOrQueue over one end of a socket pair on a bare loop; the other end is the test's.
class WritePair {
 public:
  WritePair() {
    ::signal(SIGPIPE, SIG_IGN);  // as the proxy does: a write to a closed peer fails, no signal
    uv_loop_init(&loop_);
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds_), 0);
    uv_pipe_init(&loop_, &socket.pipe, 0);
    EXPECT_EQ(uv_pipe_open(&socket.pipe, fds_[0]), 0);
    req.data = this;
  }
  ~WritePair() {
    uv_close(&socket.handle, nullptr);
    uv_run(&loop_, UV_RUN_DEFAULT);
    uv_loop_close(&loop_);
    closePeer();
  }
  WritePair(const WritePair&) = delete;
  WritePair& operator=(const WritePair&) = delete;

  WriteStep write(Buffer& wire, int* error) {
    return writeOrQueue(&socket, wire, in_flight, &req, &WritePair::onWritten, error);
  }
  void run() { uv_run(&loop_, UV_RUN_DEFAULT); }
  int peer() const { return fds_[1]; }
  void closePeer() {
    if (fds_[1] >= 0) {
      ::close(fds_[1]);
      fds_[1] = -1;
    }
  }

  StreamSocket socket{};
  uv_write_t req{};
  Buffer in_flight;
  int status = 1;  // the write callback's; 1: not called

 private:
  static void onWritten(uv_write_t* req, int status) {
    static_cast<WritePair*>(req->data)->status = status;
  }
  uv_loop_t loop_{};
  int fds_[2] = {-1, -1};
};

TEST(WriteOrQueueTest, WhatTheSocketTakesAtOnceIsDoneWithNothingInFlight) {
  WritePair pair;
  Buffer wire;
  wire.append("*1\r\n$4\r\nPING\r\n");
  int error = 0;
  EXPECT_EQ(pair.write(wire, &error), WriteStep::kDone);
  EXPECT_TRUE(wire.empty());
  EXPECT_TRUE(pair.in_flight.empty());
  char got[64] = {};
  EXPECT_EQ(::read(pair.peer(), got, sizeof got), 14);
  EXPECT_STREQ(got, "*1\r\n$4\r\nPING\r\n");
  EXPECT_EQ(pair.status, 1) << "no callback for a write done at once";
}

TEST(WriteOrQueueTest, TheRestOfALargeWriteIsQueuedAndEveryByteArrivesInOrder) {
  WritePair pair;
  std::string sent(8 << 20, '\0');
  for (size_t i = 0; i < sent.size(); ++i) {
    sent[i] = static_cast<char>('a' + i % 26);
  }
  Buffer wire;
  wire.append(sent);
  int error = 0;
  ASSERT_EQ(pair.write(wire, &error), WriteStep::kQueued);
  EXPECT_TRUE(wire.empty());
  EXPECT_GT(pair.in_flight.size(), 0u);
  EXPECT_LT(pair.in_flight.size(), sent.size()) << "the socket took a first part at once";
  std::string received;
  const timeval limit{10, 0};  // a write that failed part-way must not leave the reader blocked
  ASSERT_EQ(::setsockopt(pair.peer(), SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit), 0);
  std::thread reader([&] {
    char chunk[65536];
    while (received.size() < sent.size()) {
      const ssize_t n = ::read(pair.peer(), chunk, sizeof chunk);
      if (n <= 0) {
        return;
      }
      received.append(chunk, static_cast<size_t>(n));
    }
  });
  pair.run();
  reader.join();
  EXPECT_EQ(pair.status, 0);
  EXPECT_TRUE(received == sent) << received.size() << " of " << sent.size() << " bytes";
}

TEST(WriteOrQueueTest, AWriteToAClosedPeerFailsWithNothingInFlight) {
  WritePair pair;
  pair.closePeer();
  Buffer wire;
  wire.append("*1\r\n$4\r\nPING\r\n");
  int error = 0;
  EXPECT_EQ(pair.write(wire, &error), WriteStep::kFailed);
  EXPECT_EQ(error, UV_EPIPE);
  EXPECT_TRUE(pair.in_flight.empty());
  EXPECT_EQ(pair.status, 1);
}

}  // namespace
}  // namespace sp::backend
