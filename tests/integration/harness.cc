// Test harness for integration tests: see harness.h. Children are started with fork+execv and
// PR_SET_PDEATHSIG, so even a crashed test binary leaves no redis-server or proxy behind.
#include "integration/harness.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace sp::test {
namespace {

using Clock = std::chrono::steady_clock;

sockaddr_in loopback(uint16_t port, const std::string& host) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  if (inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1) {
    throw std::runtime_error("bad IPv4 address: " + host);
  }
  return addr;
}

bool hasFlag(const std::vector<std::string>& args, const std::string& flag) {
  for (const auto& a : args) {
    if (a == flag) {
      return true;
    }
  }
  return false;
}

}  // namespace

uint16_t freePort() {
  // The kernel may hand back a port just released, so two calls in a row (a client port and a
  // metrics port) could name the same one: never return a port this process was given before.
  static std::mutex mutex;
  static std::set<uint16_t> handed_out;
  for (int attempt = 0; attempt < 100; ++attempt) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
    }
    sockaddr_in addr = loopback(0, "127.0.0.1");
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      ::close(fd);
      throw std::runtime_error(std::string("bind: ") + std::strerror(errno));
    }
    socklen_t len = sizeof addr;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    ::close(fd);
    const uint16_t port = ntohs(addr.sin_port);
    std::lock_guard lock(mutex);
    if (handed_out.insert(port).second) {
      return port;
    }
  }
  throw std::runtime_error("no loopback port that was not handed out already");
}

bool waitForPort(uint16_t port, std::chrono::milliseconds timeout, const std::string& host) {
  const auto deadline = Clock::now() + timeout;
  const sockaddr_in addr = loopback(port, host);
  while (true) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0) {
      int rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
      ::close(fd);
      if (rc == 0) {
        return true;
      }
    }
    if (Clock::now() >= deadline) {
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

namespace {

// The inodes of the sockets listening on `port`, from one of /proc/net/tcp and tcp6.
void listeningInodes(const char* table, uint16_t port, std::set<std::string>* inodes) {
  std::ifstream in(table);
  std::string line;
  std::getline(in, line);  // the header
  char hex_port[8];
  std::snprintf(hex_port, sizeof hex_port, ":%04X", static_cast<unsigned>(port));
  while (std::getline(in, line)) {
    // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
    std::istringstream fields(line);
    std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
    fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >>
        timeout >> inode;
    if (state == "0A" && local.size() > 5 && local.compare(local.size() - 5, 5, hex_port) == 0) {
      inodes->insert("socket:[" + inode + "]");
    }
  }
}

}  // namespace

bool listensOn(pid_t pid, uint16_t port) {
  std::set<std::string> inodes;
  listeningInodes("/proc/net/tcp", port, &inodes);
  listeningInodes("/proc/net/tcp6", port, &inodes);
  if (inodes.empty()) {
    return false;
  }
  std::error_code ec;
  for (const auto& fd :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
    std::error_code link_ec;
    const auto target = std::filesystem::read_symlink(fd.path(), link_ec);
    if (!link_ec && inodes.count(target.string()) != 0) {
      return true;
    }
  }
  return false;
}

bool waitForListener(Process& process, uint16_t port, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (process.alive()) {
    if (listensOn(process.pid(), port)) {
      return true;
    }
    if (Clock::now() >= deadline) {
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// ---- TempDir ----

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl =
      std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/sp-it-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) {
    throw std::runtime_error("mkdtemp " + tmpl + ": " + std::strerror(errno));
  }
  path_ = buf.data();
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

// ---- Process ----

Process::Process(std::vector<std::string> argv, std::string log_path)
    : log_path_(std::move(log_path)) {
  if (argv.empty()) {
    throw std::runtime_error("Process: empty argv");
  }
  // Everything the child needs is prepared before fork: after fork only async-signal-safe calls.
  std::vector<char*> cargv;
  cargv.reserve(argv.size() + 1);
  for (auto& a : argv) {
    cargv.push_back(a.data());
  }
  cargv.push_back(nullptr);
  const pid_t parent = ::getpid();
  int log_fd = ::open(log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log_fd < 0) {
    throw std::runtime_error("open " + log_path_ + ": " + std::strerror(errno));
  }
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(log_fd);
    throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    // Dies with the thread that started it (tests start processes from the main thread).
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) {
      ::_exit(127);
    }
    ::dup2(log_fd, STDOUT_FILENO);
    ::dup2(log_fd, STDERR_FILENO);
    int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) {
      ::dup2(null_fd, STDIN_FILENO);
    }
    // Undo any signal mask / ignored SIGPIPE inherited from the test process.
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGPIPE, SIG_DFL);
    ::execv(cargv[0], cargv.data());
    const char msg[] = "execv failed\n";
    [[maybe_unused]] ssize_t n = ::write(STDERR_FILENO, msg, sizeof msg - 1);
    ::_exit(127);
  }
  ::close(log_fd);
  pid_ = pid;
}

Process::~Process() {
  if (alive()) {
    ::kill(pid_, SIGKILL);
    ::kill(pid_, SIGCONT);  // in case it was SIGSTOPped
    int st = 0;
    while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
    }
    status_ = st;
  }
}

bool Process::alive() {
  if (pid_ <= 0 || status_ != -1) {
    return false;
  }
  int st = 0;
  pid_t r = ::waitpid(pid_, &st, WNOHANG);
  if (r == 0) {
    return true;
  }
  if (r == pid_) {
    status_ = st;
  }
  return false;
}

void Process::signal(int sig) {
  signalled_ = true;
  if (alive()) {
    ::kill(pid_, sig);
  }
}

int Process::stop(int sig, std::chrono::milliseconds timeout) {
  signalled_ = true;
  if (!alive()) {
    return -1;
  }
  ::kill(pid_, sig);
  if (sig != SIGKILL && sig != SIGCONT) {
    ::kill(pid_, SIGCONT);  // a stopped process cannot handle sig otherwise
  }
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    if (!alive()) {
      return status_;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ::kill(pid_, SIGKILL);
  int st = 0;
  while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
  }
  status_ = st;
  return status_;
}

bool Process::exitedOnItsOwn() { return !signalled_ && pid_ > 0 && !alive(); }

std::string Process::describeStatus() const {
  if (status_ == -1) {
    return "running";
  }
  if (WIFEXITED(status_)) {
    return "exit " + std::to_string(WEXITSTATUS(status_));
  }
  if (WIFSIGNALED(status_)) {
    return "killed by signal " + std::to_string(WTERMSIG(status_));
  }
  return "status " + std::to_string(status_);
}

std::string Process::log() const {
  std::ifstream in(log_path_, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// ---- RedisServer ----

RedisServer::RedisServer(std::vector<std::string> extra_args) : extra_args_(std::move(extra_args)) {
  // A port can be taken between freePort() and redis binding it; try a few.
  for (int attempt = 0; attempt < 5; ++attempt) {
    port_ = freePort();
    try {
      start();
      return;
    } catch (const std::exception&) {
      if (attempt == 4) {
        throw;
      }
    }
  }
}

void RedisServer::start() {
  std::vector<std::string> argv = {"/usr/bin/redis-server",
                                   "--port",
                                   std::to_string(port_),
                                   "--bind",
                                   "127.0.0.1",
                                   "--save",
                                   "",
                                   "--appendonly",
                                   "no",
                                   "--dir",
                                   dir_.path(),
                                   "--daemonize",
                                   "no"};
  argv.insert(argv.end(), extra_args_.begin(), extra_args_.end());
  process_.reset();
  process_ = std::make_unique<Process>(argv, dir_.path() + "/redis.log");
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  while (Clock::now() < deadline) {
    if (!process_->alive()) {
      throw std::runtime_error("redis-server on port " + std::to_string(port_) + " exited:\n" +
                               process_->log());
    }
    // Another test's server that took the port first answers too; ours then fails to bind and
    // exits, and the caller tries another port.
    if (waitForPort(port_, std::chrono::milliseconds(50)) && listensOn(process_->pid(), port_)) {
      return;
    }
  }
  throw std::runtime_error("redis-server on port " + std::to_string(port_) + " did not start");
}

void RedisServer::kill9() {
  if (process_) {
    process_->stop(SIGKILL);
  }
}

void RedisServer::restart() {
  kill9();
  for (int attempt = 0; attempt < 50; ++attempt) {
    try {
      start();
      return;
    } catch (const std::exception&) {
      if (attempt == 49) {
        throw;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
}

void RedisServer::pause() { process_->signal(SIGSTOP); }

void RedisServer::resume() { process_->signal(SIGCONT); }

std::vector<std::unique_ptr<RedisServer>> startShards(int count) {
  std::vector<std::unique_ptr<RedisServer>> shards;
  shards.reserve(count);
  for (int i = 0; i < count; ++i) {
    shards.push_back(std::make_unique<RedisServer>());
  }
  return shards;
}

std::string shardList(const std::vector<std::unique_ptr<RedisServer>>& shards) {
  std::string out;
  for (const auto& s : shards) {
    if (!out.empty()) {
      out += ',';
    }
    out += s->address();
  }
  return out;
}

// ---- ProxyProcess ----

ProxyProcess::ProxyProcess(const std::string& shard_list, int workers,
                           std::vector<std::string> extra_args) {
  for (int attempt = 0; attempt < 5; ++attempt) {
    port_ = freePort();
    std::vector<std::string> argv = {SP_SHARDPROXY_BIN, "--port", std::to_string(port_),
                                     "--workers", std::to_string(workers)};
    if (!shard_list.empty()) {
      argv.push_back("--shards");
      argv.push_back(shard_list);
    }
    if (!hasFlag(extra_args, "--listen")) {
      argv.push_back("--listen");
      argv.push_back("127.0.0.1");
    }
    if (!hasFlag(extra_args, "--log-level")) {
      argv.push_back("--log-level");
      argv.push_back("info");
    }
    // Tests run many proxies at once: none binds the default metrics port unless asked to.
    if (!hasFlag(extra_args, "--metrics-listen")) {
      argv.push_back("--metrics-listen");
      argv.push_back("off");
    }
    argv.insert(argv.end(), extra_args.begin(), extra_args.end());
    process_ = std::make_unique<Process>(argv, dir_.path() + "/proxy.log");
    const auto deadline = Clock::now() + std::chrono::seconds(15);
    bool up = false;
    while (Clock::now() < deadline) {
      if (!process_->alive()) {
        break;
      }
      if (waitForPort(port_, std::chrono::milliseconds(50)) && listensOn(process_->pid(), port_)) {
        up = true;
        break;
      }
    }
    if (up) {
      return;
    }
    std::string log = process_->log();
    process_.reset();
    // Retry only when the port was taken under us; any other failure is the proxy's.
    if (attempt == 4 || log.find("in use") == std::string::npos) {
      throw std::runtime_error("shardproxy did not start on port " + std::to_string(port_) + ":\n" +
                               log);
    }
  }
}

ProxyProcess::~ProxyProcess() {
  if (process_ && process_->exitedOnItsOwn()) {
    std::string log = process_->log();
    if (log.size() > 20000) {
      log = "...\n" + log.substr(log.size() - 20000);
    }
    std::fprintf(stderr, "shardproxy (pid %d, port %u) exited on its own: %s; its log:\n%s\n",
                 static_cast<int>(process_->pid()), static_cast<unsigned>(port_),
                 process_->describeStatus().c_str(), log.c_str());
  }
}

// ---- Client ----

Client::Client(uint16_t port, const std::string& host) {
  timeval tv{5, 0};
  ctx_ = redisConnectWithTimeout(host.c_str(), port, tv);
  if (ctx_ != nullptr && ctx_->err == 0) {
    timeval op{60, 0};  // 64 MB values through a proxy on a busy 2-core machine
    redisSetTimeout(ctx_, op);
  }
}

Client::~Client() {
  if (ctx_ != nullptr) {
    redisFree(ctx_);
  }
}

bool Client::ok() const { return ctx_ != nullptr && ctx_->err == 0; }

std::string Client::cmd(const std::vector<std::string>& argv) {
  if (!ok()) {
    return std::string("(io-error) ") + (ctx_ != nullptr ? ctx_->errstr : "no context");
  }
  std::vector<const char*> ptrs;
  std::vector<size_t> lens;
  ptrs.reserve(argv.size());
  lens.reserve(argv.size());
  for (const auto& a : argv) {
    ptrs.push_back(a.data());
    lens.push_back(a.size());
  }
  auto* reply = static_cast<redisReply*>(
      redisCommandArgv(ctx_, static_cast<int>(argv.size()), ptrs.data(), lens.data()));
  if (reply == nullptr) {
    return std::string("(io-error) ") + ctx_->errstr;
  }
  std::string out = render(reply);
  freeReplyObject(reply);
  return out;
}

std::string encodeCommand(const std::vector<std::string>& argv) {
  std::string out = "*" + std::to_string(argv.size()) + "\r\n";
  for (const std::string& a : argv) {
    out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  }
  return out;
}

std::string render(const redisReply* reply) {
  if (reply == nullptr) {
    return "(io-error)";
  }
  switch (reply->type) {
    case REDIS_REPLY_STATUS:
    case REDIS_REPLY_STRING:
      return std::string(reply->str, reply->len);
    case REDIS_REPLY_ERROR:
      return "(error) " + std::string(reply->str, reply->len);
    case REDIS_REPLY_INTEGER:
      return "(integer) " + std::to_string(reply->integer);
    case REDIS_REPLY_NIL:
      return "(nil)";
    case REDIS_REPLY_ARRAY: {
      std::string out = "[";
      for (size_t i = 0; i < reply->elements; ++i) {
        if (i > 0) {
          out += ", ";
        }
        out += render(reply->element[i]);
      }
      return out + "]";
    }
    default:
      return "(unknown)";
  }
}

// ---- additions: raw sockets and /proc ----

RawConn::RawConn(uint16_t port, const std::string& host) {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) {
    throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  }
  const sockaddr_in addr = loopback(port, host);
  if (::connect(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    int e = errno;
    ::close(fd_);
    fd_ = -1;
    throw std::runtime_error("connect " + host + ":" + std::to_string(port) + ": " +
                             std::strerror(e));
  }
  int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

RawConn::~RawConn() { close(); }

void RawConn::close() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

bool RawConn::sendAll(std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return false;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

RawConn::Read RawConn::readSome(std::string* out, std::chrono::milliseconds timeout) {
  pollfd p{fd_, POLLIN, 0};
  int rc = ::poll(&p, 1, static_cast<int>(timeout.count()));
  if (rc == 0) {
    return Read::kTimeout;
  }
  if (rc < 0) {
    return Read::kError;
  }
  char buf[65536];
  ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
  if (n > 0) {
    out->append(buf, static_cast<size_t>(n));
    return Read::kData;
  }
  if (n == 0) {
    return Read::kClosed;
  }
  return errno == ECONNRESET ? Read::kClosed : Read::kError;
}

std::string RawConn::readUntil(std::string_view needle, std::chrono::milliseconds timeout) {
  std::string out;
  const auto deadline = Clock::now() + timeout;
  while (out.find(needle) == std::string::npos) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      break;
    }
    if (readSome(&out, left) != Read::kData) {
      break;
    }
  }
  return out;
}

bool RawConn::readToClose(std::string* out, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      return false;
    }
    switch (readSome(out, left)) {
      case Read::kData:
        break;
      case Read::kClosed:
        return true;
      case Read::kError:
        return true;  // a reset is a close too
      case Read::kTimeout:
        return false;
    }
  }
}

long rssKb(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) {
      return std::strtol(line.c_str() + 6, nullptr, 10);
    }
  }
  return -1;
}

std::string commandOutput(const std::string& shell_command) {
  std::string out;
  FILE* f = ::popen(shell_command.c_str(), "r");
  if (f == nullptr) {
    return out;
  }
  char buf[4096];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) {
    out.append(buf, n);
  }
  ::pclose(f);
  return out;
}

bool directMode() {
  const char* v = std::getenv("SP_IT_DIRECT");
  return v != nullptr && std::string(v) == "1";
}

Deployment::Deployment(int count, int workers, std::vector<std::string> proxy_args) {
  if (directMode()) {
    shards_ = startShards(1);
    return;
  }
  shards_ = startShards(count);
  proxy_ = std::make_unique<ProxyProcess>(shardList(shards_), workers, std::move(proxy_args));
}

uint16_t Deployment::port() const {
  return proxy_ != nullptr ? proxy_->port() : shards_.front()->port();
}

uint16_t testKeySlot(std::string_view key) {
  size_t open = key.find('{');
  if (open != std::string_view::npos) {
    size_t close = key.find('}', open + 1);
    if (close != std::string_view::npos && close > open + 1) {
      key = key.substr(open + 1, close - open - 1);
    }
  }
  uint16_t crc = 0;
  for (unsigned char c : key) {
    crc ^= static_cast<uint16_t>(c) << 8;
    for (int i = 0; i < 8; ++i) {
      crc = (crc & 0x8000) != 0 ? static_cast<uint16_t>((crc << 1) ^ 0x1021)
                                : static_cast<uint16_t>(crc << 1);
    }
  }
  return crc & 16383;
}

}  // namespace sp::test
