// A blocking Redis connection for the control plane (Sentinel, CLUSTER SLOTS, the INFO poller):
// TCP (plain or TLS) or a Unix socket, with a connect timeout and a timeout on every wait for the
// socket. hiredis 0.14 has no TLS, so the bytes go through this class and hiredis only formats
// commands (redisFormatCommandArgv) and parses replies (redisReader). Never on a worker thread.
//
//   connect() --> [TLS handshake] --> command(argv) / send(argv) + nextReply(timeout) ...
//
// After any failure the connection is unusable: error() says why and every later call fails.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tls/tls_context.h"

struct redisReply;
struct redisReader;
using SSL = struct ssl_st;

namespace sp::route {

struct ReplyDeleter {
  void operator()(redisReply* r) const;
};
// An owned hiredis reply (freeReplyObject on destruction).
using Reply = std::unique_ptr<redisReply, ReplyDeleter>;

class BlockingClient {
 public:
  using Clock = std::chrono::steady_clock;

  struct Options {
    std::chrono::milliseconds connect_timeout{1000};  // TCP connect, and the TLS handshake
    std::chrono::milliseconds io_timeout{1000};       // each wait to send or for reply bytes
    // Client-side TLS context (TlsContext::makeClient); nullptr = plain. SNI and the name
    // verified are the context's server_name, or else the host passed to connect(). Not used
    // by connectUnix().
    std::shared_ptr<const tls::TlsContext> tls;
  };

  enum class ReadResult { kReply, kTimeout, kFailed };

  explicit BlockingClient(Options options);
  ~BlockingClient();
  BlockingClient(const BlockingClient&) = delete;
  BlockingClient& operator=(const BlockingClient&) = delete;

  // Connects to host:port (a name or an address; IPv4 is tried before IPv6, as hiredis does) and,
  // with a TLS context, completes the handshake. False with error() set.
  bool connect(const std::string& host, uint16_t port);
  // Connects to a Unix socket, always plain: redis-server speaks TLS only on its tls-port.
  bool connectUnix(const std::string& path);

  // Sends argv and waits for its reply. An error reply is a reply (type REDIS_REPLY_ERROR);
  // nullptr means the connection failed (error() says why).
  Reply command(const std::vector<std::string>& argv);
  // Sends argv without waiting for a reply (the replies are read with nextReply).
  bool send(const std::vector<std::string>& argv);
  // The next reply: one already read, or one that arrives within `timeout`. kTimeout leaves the
  // connection usable; kFailed does not (error() says why: closed by the peer, a protocol error).
  ReadResult nextReply(std::chrono::milliseconds timeout, Reply* out);

  bool connected() const { return fd_ >= 0 && error_.empty(); }
  const std::string& error() const { return error_; }

 private:
  bool connectFd(int fd, const void* addr, unsigned addr_len);
  bool handshake(const std::string& host);
  bool writeAll(const char* data, size_t n);
  // The next reply, reading as needed; each wait for bytes lasts at most wait_ms and ends by the
  // deadline.
  ReadResult readReply(Reply* out, int wait_ms, Clock::time_point deadline);
  // Bytes from the socket (decrypted with TLS), waiting up to `timeout_ms`: > 0 the count, 0 none
  // arrived in time, -1 failure (error() set).
  long readSome(char* dst, size_t cap, int timeout_ms);
  // Waits for the socket to be readable (POLLIN) or writable (POLLOUT): 1 ready, 0 timed out,
  // -1 failure.
  int waitFor(short events, int timeout_ms);
  bool fail(std::string why);
  void close();

  Options options_;
  int fd_ = -1;
  SSL* ssl_ = nullptr;
  redisReader* reader_ = nullptr;
  std::string error_;
};

}  // namespace sp::route
