// Process metrics from /proc/self/stat, /proc/self/fd, /proc/self/limits and /proc/stat.
#include "metrics/process_metrics.h"

#include <dirent.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace sp::metrics {
namespace {

// The fields of /proc/self/stat after the command name (which may contain spaces), so that
// fields[0] is field 3 ("state") of proc(5).
std::vector<std::string> statFields() {
  std::ifstream in("/proc/self/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> out;
  const size_t close = text.rfind(')');
  if (close == std::string::npos) {
    return out;
  }
  std::istringstream rest(text.substr(close + 1));
  std::string field;
  while (rest >> field) {
    out.push_back(field);
  }
  return out;
}

double bootTimeSeconds() {
  std::ifstream in("/proc/stat");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("btime ", 0) == 0) {
      return std::strtod(line.c_str() + 6, nullptr);
    }
  }
  return 0;
}

double openFds() {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) {
    return -1;
  }
  double n = 0;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] != '.') {
      ++n;
    }
  }
  closedir(dir);
  return n - 1;  // the directory stream's own descriptor
}

double maxFds() {
  std::ifstream in("/proc/self/limits");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Max open files", 0) == 0) {
      std::istringstream fields(line.substr(14));
      std::string soft;
      fields >> soft;
      return soft == "unlimited" ? -1 : std::strtod(soft.c_str(), nullptr);
    }
  }
  return -1;
}

}  // namespace

void collectProcessMetrics(FamilySet* out) {
  const std::vector<std::string> f = statFields();
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  // proc(5) field n is f[n - 3]: utime 14, stime 15, starttime 22, vsize 23, rss 24.
  if (f.size() >= 22 && ticks > 0) {
    const double cpu =
        (std::strtod(f[11].c_str(), nullptr) + std::strtod(f[12].c_str(), nullptr)) / ticks;
    out->add("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.",
             Type::kCounter, {}, cpu);
    out->add("process_start_time_seconds", "Start time of the process since unix epoch in seconds.",
             Type::kGauge, {}, bootTimeSeconds() + std::strtod(f[19].c_str(), nullptr) / ticks);
    out->add("process_virtual_memory_bytes", "Virtual memory size in bytes.", Type::kGauge, {},
             std::strtod(f[20].c_str(), nullptr));
    out->add("process_resident_memory_bytes", "Resident memory size in bytes.", Type::kGauge, {},
             std::strtod(f[21].c_str(), nullptr) * page);
  }
  const double open = openFds();
  if (open >= 0) {
    out->add("process_open_fds", "Number of open file descriptors.", Type::kGauge, {}, open);
  }
  const double max = maxFds();
  if (max >= 0) {
    out->add("process_max_fds", "Maximum number of open file descriptors.", Type::kGauge, {}, max);
  }
}

}  // namespace sp::metrics
