// Reading /proc and uname for reports, and asking binaries for their version.
#include "machine_info.h"

#include <sched.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>
#include <thread>

#include "child_process.h"

namespace sp::bench {
namespace {

uint64_t meminfo(const std::string& key) {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + ":", 0) == 0) {
      return std::strtoull(line.c_str() + key.size() + 1, nullptr, 10);
    }
  }
  return 0;
}

std::string runCapture(const std::string& binary, const std::string& flag) {
  char tmpl[] = "/tmp/shardbench-probe-XXXXXX";
  const int fd = ::mkstemp(tmpl);
  if (fd < 0) {
    return "";
  }
  ::close(fd);
  std::string error;
  std::string text;
  {
    auto child = ChildProcess::start({binary, flag}, tmpl, &error);
    if (child != nullptr) {
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
      while (child->running() && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      child->stop(std::chrono::milliseconds(100));
      text = child->logTail(64 * 1024);
    }
  }
  ::unlink(tmpl);
  return text;
}

}  // namespace

unsigned onlineCpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    return static_cast<unsigned>(CPU_COUNT(&set));
  }
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<unsigned>(n) : 1;
}

uint64_t memAvailableKb() { return meminfo("MemAvailable"); }

MachineInfo machineInfo() {
  MachineInfo m;
  m.nproc = onlineCpus();
  std::ifstream cpu("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpu, line)) {
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) {
        m.cpu_model = line.substr(colon + 2);
      }
      break;
    }
  }
  m.mem_total_kb = meminfo("MemTotal");
  m.mem_available_kb = meminfo("MemAvailable");
  utsname u{};
  if (uname(&u) == 0) {
    m.kernel = std::string(u.sysname) + " " + u.release;
  }
  m.open_files = openFileLimit();
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[64];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S UTC", &tm);
  m.date_utc = buf;
  return m;
}

std::string versionOf(const std::string& binary) {
  std::string text = runCapture(binary, "--version");
  const size_t nl = text.find('\n');
  return nl == std::string::npos ? text : text.substr(0, nl);
}

std::string helpOf(const std::string& binary) { return runCapture(binary, "--help"); }

std::string machineMarkdown(const MachineInfo& m) {
  char buf[512];
  std::snprintf(buf, sizeof(buf),
                "- **machine**: %u CPUs (nproc), %s, %.1f GB RAM (%.1f GB available at the "
                "start), %s, open-file limit %llu\n- **date**: %s\n",
                m.nproc, m.cpu_model.empty() ? "unknown CPU" : m.cpu_model.c_str(),
                static_cast<double>(m.mem_total_kb) / 1048576.0,
                static_cast<double>(m.mem_available_kb) / 1048576.0, m.kernel.c_str(),
                static_cast<unsigned long long>(m.open_files), m.date_utc.c_str());
  return buf;
}

}  // namespace sp::bench
