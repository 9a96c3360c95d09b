// fork/exec with a CLOEXEC pipe that reports pinning and exec failures, and stopping by PID.
#include "child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "interrupt.h"

namespace sp::bench {

namespace {

// What the child writes into the CLOEXEC pipe when it fails before or at exec.
struct ChildFailure {
  int stage;  // kPinFailed or kExecFailed
  int error;  // errno
};
constexpr int kPinFailed = 1;
constexpr int kExecFailed = 2;

}  // namespace

std::unique_ptr<ChildProcess> ChildProcess::start(const std::vector<std::string>& argv,
                                                  const std::string& log_path, std::string* error,
                                                  const CpuList& cpus) {
  if (argv.empty()) {
    *error = "empty command";
    return nullptr;
  }
  const int log_fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) {
    *error = "cannot open " + log_path + ": " + std::strerror(errno);
    return nullptr;
  }
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    ::close(log_fd);
    *error = std::string("pipe: ") + std::strerror(errno);
    return nullptr;
  }
  std::vector<char*> args;
  for (const auto& a : argv) {
    args.push_back(const_cast<char*>(a.c_str()));
  }
  args.push_back(nullptr);
  const cpu_set_t cpu_set = cpuSetOf(cpus);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(log_fd);
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    *error = std::string("fork: ") + std::strerror(errno);
    return nullptr;
  }
  if (pid == 0) {
    // Child: only async-signal-safe calls until exec.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) {
      ::_exit(127);
    }
    struct sigaction sa {};
    sa.sa_handler = SIG_DFL;
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    sigaction(SIGPIPE, &sa, nullptr);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    ::setpgid(0, 0);  // a Ctrl-C on the terminal reaches us, not the servers directly
    rlimit lim{};
    if (::getrlimit(RLIMIT_NOFILE, &lim) == 0) {
      lim.rlim_cur = lim.rlim_max;
      ::setrlimit(RLIMIT_NOFILE, &lim);
    }
    const int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) {
      ::dup2(null_fd, 0);
    }
    ::dup2(log_fd, 1);
    ::dup2(log_fd, 2);
    if (!cpus.empty() && ::sched_setaffinity(0, sizeof(cpu_set), &cpu_set) != 0) {
      const ChildFailure f{kPinFailed, errno};
      (void)!::write(pipe_fds[1], &f, sizeof(f));
      ::_exit(127);
    }
    ::execv(args[0], args.data());
    const ChildFailure f{kExecFailed, errno};
    (void)!::write(pipe_fds[1], &f, sizeof(f));
    ::_exit(127);
  }
  ::close(log_fd);
  ::close(pipe_fds[1]);
  ChildFailure failure{};
  ssize_t got;
  do {
    got = ::read(pipe_fds[0], &failure, sizeof(failure));
  } while (got < 0 && errno == EINTR);
  ::close(pipe_fds[0]);
  if (got == static_cast<ssize_t>(sizeof(failure))) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    *error = failure.stage == kPinFailed
                 ? "cannot pin " + argv[0] + " to " + describeCpus(cpus) + ": " +
                       std::strerror(failure.error)
                 : "cannot execute " + argv[0] + ": " + std::strerror(failure.error);
    return nullptr;
  }
  registerChild(pid);
  return std::unique_ptr<ChildProcess>(new ChildProcess(pid, log_path));
}

ChildProcess::~ChildProcess() { stop(); }

bool ChildProcess::running() {
  if (reaped_) {
    return false;
  }
  int status = 0;
  const pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == pid_ || (r < 0 && errno == ECHILD)) {
    reaped_ = true;
    status_ = r == pid_ ? status : 0;
    unregisterChild(pid_);
    return false;
  }
  return true;
}

void ChildProcess::stop(std::chrono::milliseconds grace) {
  if (!running()) {
    return;
  }
  ::kill(pid_, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (running() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (running()) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    reaped_ = true;
    status_ = status;
    unregisterChild(pid_);
  }
}

std::string ChildProcess::describeExit() {
  if (running()) {
    return "running";
  }
  if (WIFEXITED(status_)) {
    return "exited with status " + std::to_string(WEXITSTATUS(status_));
  }
  if (WIFSIGNALED(status_)) {
    return "killed by signal " + std::to_string(WTERMSIG(status_));
  }
  return "ended";
}

std::string ChildProcess::logTail(size_t max_bytes) const {
  std::ifstream in(log_path_, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  if (text.size() > max_bytes) {
    text = "..." + text.substr(text.size() - max_bytes);
  }
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) {
    text.pop_back();
  }
  return text;
}

uint64_t raiseOpenFileLimit() {
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) != 0) {
    return 0;
  }
  if (lim.rlim_cur < lim.rlim_max) {
    lim.rlim_cur = lim.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &lim);
  }
  return openFileLimit();
}

uint64_t openFileLimit() {
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) != 0) {
    return 0;
  }
  return lim.rlim_cur;
}

}  // namespace sp::bench
