// ChildProcess: a server that matrix and scenario runs start themselves (redis-server,
// shardproxy, nutcracker). It is started with execv, its output appended to a log file, its
// open-file limit raised to the hard limit, and it dies with shardbench (PR_SET_PDEATHSIG) even
// when shardbench is killed; Ctrl-C reaches it through the interrupt table. It may be pinned to
// CPUs (sched_setaffinity before exec); otherwise it runs where shardbench's main thread may.
// Stopped by PID only.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "cpu_list.h"

namespace sp::bench {

class ChildProcess {
 public:
  // Starts argv[0] (a path; not searched in PATH), pinned to `cpus` unless that is empty. Null
  // with a message in *error when it cannot be executed (missing file, not executable) or
  // pinned: those failures are reported synchronously.
  static std::unique_ptr<ChildProcess> start(const std::vector<std::string>& argv,
                                             const std::string& log_path, std::string* error,
                                             const CpuList& cpus = {});
  ~ChildProcess();  // stop()
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  // Not yet exited; reaps it when it has.
  bool running();
  // SIGTERM, then SIGKILL after `grace`; always reaps. Idempotent.
  void stop(std::chrono::milliseconds grace = std::chrono::seconds(5));
  // "exited with status 2", "killed by signal 9", "running".
  std::string describeExit();
  const std::string& logPath() const { return log_path_; }
  // The last `max_bytes` of the log, for error messages.
  std::string logTail(size_t max_bytes = 2000) const;

 private:
  ChildProcess(pid_t pid, std::string log_path) : pid_(pid), log_path_(std::move(log_path)) {}
  pid_t pid_ = -1;
  bool reaped_ = false;
  int status_ = 0;
  std::string log_path_;
};

// The soft RLIMIT_NOFILE raised to the hard limit for this process (children inherit it).
// Returns the limit now in force.
uint64_t raiseOpenFileLimit();
uint64_t openFileLimit();  // the current soft limit

}  // namespace sp::bench
