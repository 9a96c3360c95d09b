// BlockingClient: a non-blocking socket driven with poll(), so that every wait has a timeout, and
// OpenSSL on the same socket (SSL_set_fd) when the connection is TLS. Plain writes pass
// MSG_NOSIGNAL; OpenSSL's socket writes rely on the proxy ignoring SIGPIPE (main does).
#include "route/blocking_client.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

namespace sp::route {
namespace {

using Clock = BlockingClient::Clock;

constexpr size_t kReadChunk = 16 * 1024;

int toMs(std::chrono::milliseconds d) {
  return static_cast<int>(std::clamp<int64_t>(d.count(), 0, INT_MAX));
}

int msUntil(Clock::time_point deadline) {
  return toMs(std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()));
}

bool isIpAddress(const std::string& host) {
  unsigned char buf[sizeof(in6_addr)];
  return inet_pton(AF_INET, host.c_str(), buf) == 1 || inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

// Why an OpenSSL call failed: the library's reason ("certificate verify failed"), the
// certificate check's when there is one ("unable to get local issuer certificate"), else the
// socket's. Clears this thread's error queue.
std::string sslFailure(SSL* ssl, int ssl_error, int saved_errno) {
  std::string detail;
  if (const unsigned long e = ERR_peek_last_error(); e != 0) {
    const char* reason = ERR_reason_error_string(e);
    detail = reason != nullptr ? reason : "error " + std::to_string(e);
  }
  ERR_clear_error();
  if (const long verify = SSL_get_verify_result(ssl); verify != X509_V_OK) {
    detail += (detail.empty() ? "" : ": ") + std::string(X509_verify_cert_error_string(verify));
  }
  if (detail.empty()) {
    detail = ssl_error == SSL_ERROR_SYSCALL && saved_errno != 0 ? std::strerror(saved_errno)
                                                                : "Server closed the connection";
  }
  return detail;
}

}  // namespace

void ReplyDeleter::operator()(redisReply* r) const { freeReplyObject(r); }

BlockingClient::BlockingClient(Options options) : options_(std::move(options)) {}

BlockingClient::~BlockingClient() { close(); }

void BlockingClient::close() {
  if (ssl_ != nullptr) {
    SSL_free(ssl_);
    ssl_ = nullptr;
  }
  if (reader_ != nullptr) {
    redisReaderFree(reader_);
    reader_ = nullptr;
  }
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

bool BlockingClient::fail(std::string why) {
  if (error_.empty()) {
    error_ = std::move(why);
  }
  return false;
}

int BlockingClient::waitFor(short events, int timeout_ms) {
  for (;;) {
    pollfd p{fd_, events, 0};
    const int rc = ::poll(&p, 1, timeout_ms);
    if (rc >= 0) {
      return rc;
    }
    if (errno != EINTR) {
      fail(std::string("poll: ") + std::strerror(errno));
      return -1;
    }
  }
}

bool BlockingClient::connectFd(int fd, const void* addr, unsigned addr_len) {
  fd_ = fd;
  if (::connect(fd_, static_cast<const sockaddr*>(addr), addr_len) == 0) {
    return true;
  }
  if (errno != EINPROGRESS) {
    return fail(std::strerror(errno));
  }
  const int ready = waitFor(POLLOUT, toMs(options_.connect_timeout));
  if (ready == 0) {
    return fail(std::strerror(ETIMEDOUT));
  }
  int err = 0;
  socklen_t len = sizeof err;
  if (ready < 0 || ::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len) != 0) {
    return fail(std::strerror(errno));
  }
  return err == 0 || fail(std::strerror(err));
}

bool BlockingClient::connect(const std::string& host, uint16_t port) {
  close();
  error_.clear();
  // IPv4 first, IPv6 when the name has no IPv4 address: hiredis's order, which spares a connect
  // attempt on hosts without IPv6 connectivity.
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found);
  if (rc != 0) {
    hints.ai_family = AF_INET6;
    rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found);
  }
  if (rc != 0) {
    return fail(::gai_strerror(rc));
  }
  bool connected_tcp = false;
  for (const addrinfo* a = found; a != nullptr && !connected_tcp; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      fail(std::strerror(errno));
      continue;
    }
    error_.clear();  // keep the last address's error only
    connected_tcp = connectFd(fd, a->ai_addr, a->ai_addrlen);
    if (!connected_tcp) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ::freeaddrinfo(found);
  if (!connected_tcp) {
    return false;
  }
  const int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  reader_ = redisReaderCreate();
  if (reader_ == nullptr) {
    return fail("out of memory");
  }
  return options_.tls == nullptr || handshake(host);
}

bool BlockingClient::connectUnix(const std::string& path) {
  close();
  error_.clear();
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) {
    return fail("socket path too long: " + path);
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return fail(std::strerror(errno));
  }
  if (!connectFd(fd, &addr, sizeof addr)) {
    return false;
  }
  reader_ = redisReaderCreate();
  return reader_ != nullptr || fail("out of memory");
}

bool BlockingClient::handshake(const std::string& host) {
  ssl_ = SSL_new(options_.tls->native());
  if (ssl_ == nullptr || SSL_set_fd(ssl_, fd_) != 1) {
    return fail("TLS setup failed: " + tls::lastError());
  }
  SSL_set_connect_state(ssl_);
  // The name sent and verified, as tls::TlsChannel sets it for the shard connections.
  const std::string name = options_.tls->serverName().empty() ? host : options_.tls->serverName();
  if (isIpAddress(name)) {
    // No SNI for an address (RFC 6066); the certificate must name it as an IP SAN.
    if (options_.tls->verifyPeer()) {
      X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl_), name.c_str());
    }
  } else if (!name.empty()) {
    SSL_set_tlsext_host_name(ssl_, name.c_str());
    if (options_.tls->verifyPeer()) {
      SSL_set1_host(ssl_, name.c_str());
    }
  }
  const Clock::time_point deadline = Clock::now() + options_.connect_timeout;
  for (;;) {
    ERR_clear_error();
    const int rc = SSL_connect(ssl_);
    if (rc == 1) {
      return true;
    }
    const int saved_errno = errno;
    const int err = SSL_get_error(ssl_, rc);
    if (err != SSL_ERROR_WANT_READ && err != SSL_ERROR_WANT_WRITE) {
      return fail("TLS handshake failed: " + sslFailure(ssl_, err, saved_errno));
    }
    const int ready = waitFor(err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, msUntil(deadline));
    if (ready == 0) {
      return fail("TLS handshake timed out");
    }
    if (ready < 0) {
      return false;
    }
  }
}

bool BlockingClient::writeAll(const char* data, size_t n) {
  while (n > 0) {
    short want = POLLOUT;
    ssize_t written = 0;
    if (ssl_ != nullptr) {
      ERR_clear_error();
      const int rc = SSL_write(ssl_, data, static_cast<int>(std::min<size_t>(n, INT_MAX)));
      const int saved_errno = errno;
      const int err = rc > 0 ? SSL_ERROR_NONE : SSL_get_error(ssl_, rc);
      if (err == SSL_ERROR_WANT_READ) {
        want = POLLIN;
      } else if (err != SSL_ERROR_NONE && err != SSL_ERROR_WANT_WRITE) {
        return fail("TLS write failed: " + sslFailure(ssl_, err, saved_errno));
      }
      written = rc > 0 ? rc : 0;
    } else {
      written = ::send(fd_, data, n, MSG_NOSIGNAL);
      if (written < 0 && errno != EAGAIN && errno != EINTR) {
        return fail(std::strerror(errno));
      }
      written = std::max<ssize_t>(written, 0);
    }
    data += written;
    n -= static_cast<size_t>(written);
    if (n > 0 && written == 0) {
      const int ready = waitFor(want, toMs(options_.io_timeout));
      if (ready == 0) {
        return fail("timed out sending a command");
      }
      if (ready < 0) {
        return false;
      }
    }
  }
  return true;
}

long BlockingClient::readSome(char* dst, size_t cap, int timeout_ms) {
  for (;;) {
    short want = POLLIN;
    if (ssl_ != nullptr) {
      ERR_clear_error();
      const int rc = SSL_read(ssl_, dst, static_cast<int>(std::min<size_t>(cap, INT_MAX)));
      if (rc > 0) {
        return rc;
      }
      const int saved_errno = errno;
      const int err = SSL_get_error(ssl_, rc);
      if (err == SSL_ERROR_WANT_WRITE) {
        want = POLLOUT;
      } else if (err == SSL_ERROR_ZERO_RETURN) {
        fail("Server closed the connection");
        return -1;
      } else if (err != SSL_ERROR_WANT_READ) {
        fail("TLS read failed: " + sslFailure(ssl_, err, saved_errno));
        return -1;
      }
    } else {
      const ssize_t rc = ::recv(fd_, dst, cap, 0);
      if (rc > 0) {
        return rc;
      }
      if (rc == 0) {
        fail("Server closed the connection");
        return -1;
      }
      if (errno != EAGAIN && errno != EINTR) {
        fail(std::strerror(errno));
        return -1;
      }
    }
    const int ready = waitFor(want, timeout_ms);
    if (ready <= 0) {
      return ready;
    }
  }
}

bool BlockingClient::send(const std::vector<std::string>& argv) {
  if (!connected()) {
    return fail("not connected");
  }
  std::vector<const char*> args;
  std::vector<size_t> lens;
  args.reserve(argv.size());
  lens.reserve(argv.size());
  for (const std::string& a : argv) {
    args.push_back(a.data());
    lens.push_back(a.size());
  }
  char* cmd = nullptr;
  const int len =
      redisFormatCommandArgv(&cmd, static_cast<int>(argv.size()), args.data(), lens.data());
  if (len < 0) {
    return fail("out of memory");
  }
  const bool ok = writeAll(cmd, static_cast<size_t>(len));
  redisFreeCommand(cmd);
  return ok;
}

BlockingClient::ReadResult BlockingClient::readReply(Reply* out, int wait_ms,
                                                     Clock::time_point deadline) {
  for (;;) {
    if (!connected()) {
      fail("not connected");
      return ReadResult::kFailed;
    }
    void* raw = nullptr;
    if (redisReaderGetReply(reader_, &raw) != REDIS_OK) {
      fail(std::string("protocol error: ") + reader_->errstr);
      return ReadResult::kFailed;
    }
    if (raw != nullptr) {
      out->reset(static_cast<redisReply*>(raw));
      return ReadResult::kReply;
    }
    char buf[kReadChunk];
    const long n = readSome(buf, sizeof buf, std::min(wait_ms, msUntil(deadline)));
    if (n < 0) {
      return ReadResult::kFailed;
    }
    if (n == 0) {
      return ReadResult::kTimeout;
    }
    if (redisReaderFeed(reader_, buf, static_cast<size_t>(n)) != REDIS_OK) {
      fail("out of memory");
      return ReadResult::kFailed;
    }
  }
}

BlockingClient::ReadResult BlockingClient::nextReply(std::chrono::milliseconds timeout,
                                                     Reply* out) {
  return readReply(out, toMs(timeout), Clock::now() + timeout);
}

Reply BlockingClient::command(const std::vector<std::string>& argv) {
  if (!send(argv)) {
    return nullptr;
  }
  // As with a socket receive timeout, each wait for reply bytes may last io_timeout, however long
  // the whole reply takes.
  Reply reply;
  switch (readReply(&reply, toMs(options_.io_timeout), Clock::time_point::max())) {
    case ReadResult::kReply:
      return reply;
    case ReadResult::kTimeout:
      // The reply may still come: the connection is out of step with its commands from now on.
      fail("timed out waiting for a reply");
      return nullptr;
    case ReadResult::kFailed:
      break;
  }
  return nullptr;
}

}  // namespace sp::route
