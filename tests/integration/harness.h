// Test harness for integration tests: free loopback ports, child processes stopped by PID, real
// redis-server shards and the real shardproxy / shardbench binaries, and a small hiredis client.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

struct redisContext;
struct redisReply;

namespace sp::test {

// A port that was free on 127.0.0.1 a moment ago (bound to port 0, read back, closed).
uint16_t freePort();

// True once something accepts TCP connections on host:port, polling until the timeout.
bool waitForPort(uint16_t port, std::chrono::milliseconds timeout,
                 const std::string& host = "127.0.0.1");

// True when process `pid` holds a socket listening on `port` (any local address, IPv4 or IPv6).
// Something answering on a port is not yet the process a test started: two test processes can be
// handed the same free port, and the one that loses the bind exits while the winner answers.
bool listensOn(pid_t pid, uint16_t port);

class Process;
// True once `process` itself listens on `port`, polling until the timeout; false if it exits.
bool waitForListener(Process& process, uint16_t port, std::chrono::milliseconds timeout);

// A fresh directory under $TMPDIR (or /tmp) for logs and data; removed by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A child process started with execv; stdout+stderr go to log_path. The destructor SIGKILLs it
// if it is still running and reaps it, so no test leaves a process behind.
class Process {
 public:
  Process(std::vector<std::string> argv, std::string log_path);
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  pid_t pid() const { return pid_; }
  bool alive();          // not yet exited (reaps it if it has)
  void signal(int sig);  // kill(pid, sig) when alive
  // Sends sig, waits up to timeout for exit, SIGKILLs after that. Returns the exit status as
  // waitpid reports it (or -1 when it had already been reaped).
  int stop(int sig, std::chrono::milliseconds timeout = std::chrono::seconds(10));
  int exitStatus() const { return status_; }
  std::string log() const;  // the whole log file so far
  // True when it has exited although the test never signalled it (a crash, or an early exit).
  bool exitedOnItsOwn();
  std::string describeStatus() const;  // "exit 0", "killed by signal 11", "running"

 private:
  pid_t pid_ = -1;
  int status_ = -1;
  bool signalled_ = false;
  std::string log_path_;
};

// A redis-server on 127.0.0.1:<free port>, no persistence, its files in its own TempDir.
class RedisServer {
 public:
  explicit RedisServer(std::vector<std::string> extra_args = {});
  uint16_t port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  Process& process() { return *process_; }
  void kill9();    // SIGKILL, reaped
  void restart();  // start again on the same port (after kill9)
  void pause();    // SIGSTOP
  void resume();   // SIGCONT

 private:
  void start();
  std::vector<std::string> extra_args_;
  TempDir dir_;
  uint16_t port_ = 0;
  std::unique_ptr<Process> process_;
};

// N redis-server shards.
std::vector<std::unique_ptr<RedisServer>> startShards(int count);
std::string shardList(const std::vector<std::unique_ptr<RedisServer>>& shards);  // "h:p,h:p"

// The real shardproxy binary (SP_SHARDPROXY_BIN) on a free port, started with --port, --shards
// and any extra flags; waits until it accepts connections.
class ProxyProcess {
 public:
  ProxyProcess(const std::string& shard_list, int workers,
               std::vector<std::string> extra_args = {});
  ~ProxyProcess();  // prints the proxy's log to stderr when it exited on its own
  uint16_t port() const { return port_; }
  Process& process() { return *process_; }

 private:
  TempDir dir_;
  uint16_t port_ = 0;
  std::unique_ptr<Process> process_;
};

// A blocking hiredis connection; the destructor frees it.
class Client {
 public:
  explicit Client(uint16_t port, const std::string& host = "127.0.0.1");
  ~Client();
  redisContext* ctx() { return ctx_; }
  bool ok() const;

  // Sends argv as one command and returns the reply rendered as text: "OK"/"PONG" for status,
  // the payload for bulk strings, "(nil)" for null, "(integer) N", "(error) MSG", and arrays as
  // "[a, b, ...]" with the same rendering for the elements.
  std::string cmd(const std::vector<std::string>& argv);

 private:
  redisContext* ctx_ = nullptr;
};

// Renders a hiredis reply the way Client::cmd does.
std::string render(const redisReply* reply);

// argv as one RESP multibulk command, for RawConn.
std::string encodeCommand(const std::vector<std::string>& argv);

// ---- additions for protocol-level tests ----

// A plain blocking TCP connection for sending arbitrary bytes (malformed input, raw pipelines).
class RawConn {
 public:
  explicit RawConn(uint16_t port, const std::string& host = "127.0.0.1");
  ~RawConn();
  RawConn(const RawConn&) = delete;
  RawConn& operator=(const RawConn&) = delete;

  enum class Read { kData, kClosed, kTimeout, kError };
  int fd() const { return fd_; }
  bool sendAll(std::string_view data);  // false when the peer is gone
  // One recv() after waiting up to timeout for readability; appends what arrived to *out.
  Read readSome(std::string* out, std::chrono::milliseconds timeout);
  // Reads until `needle` appears, the peer closes or the timeout passes; returns all bytes read.
  std::string readUntil(std::string_view needle, std::chrono::milliseconds timeout);
  // Reads until the peer closes (true) or the timeout passes (false); appends to *out.
  bool readToClose(std::string* out, std::chrono::milliseconds timeout);
  void close();

 private:
  int fd_ = -1;
};

// VmRSS of a process in kB (from /proc/<pid>/status), -1 when unknown.
long rssKb(pid_t pid);

// stdout of `sh -c shell_command`.
std::string commandOutput(const std::string& shell_command);

// True when SP_IT_DIRECT=1: tests then run straight against one redis-server instead of the
// proxy, to check that their expectations match real Redis. Proxy-only tests skip themselves.
bool directMode();

// `count` redis-server shards and a shardproxy in front of them (1 shard and no proxy in direct
// mode). port() is where clients connect.
class Deployment {
 public:
  explicit Deployment(int count, int workers = 1, std::vector<std::string> proxy_args = {});
  uint16_t port() const;
  bool direct() const { return proxy_ == nullptr; }
  ProxyProcess* proxy() { return proxy_.get(); }  // nullptr in direct mode
  std::vector<std::unique_ptr<RedisServer>>& shards() { return shards_; }

 private:
  std::vector<std::unique_ptr<RedisServer>> shards_;
  std::unique_ptr<ProxyProcess> proxy_;
};

// Redis Cluster slot of a key (CRC16-XMODEM of the key or its hash tag, mod 16384); the tests'
// own implementation, independent of proxy/src/route.
uint16_t testKeySlot(std::string_view key);

}  // namespace sp::test
