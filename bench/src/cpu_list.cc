// Parsing, formatting and applying CPU lists.
#include "cpu_list.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <iterator>

namespace sp::bench {
namespace {

bool parseCpu(std::string_view text, int* out) {
  int v = 0;
  const char* end = text.data() + text.size();
  const auto res = std::from_chars(text.data(), end, v);
  if (text.empty() || res.ec != std::errc() || res.ptr != end || v < 0 || v >= CPU_SETSIZE) {
    return false;
  }
  *out = v;
  return true;
}

}  // namespace

bool parseCpuList(std::string_view text, CpuList* out, std::string* error) {
  CpuList cpus;
  bool ok = !text.empty();
  size_t start = 0;
  while (ok && start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) {
      comma = text.size();
    }
    const std::string_view part = text.substr(start, comma - start);
    const size_t dash = part.find('-');
    int lo = 0;
    int hi = 0;
    if (dash == std::string_view::npos) {
      ok = parseCpu(part, &lo);
      hi = lo;
    } else {
      ok = parseCpu(part.substr(0, dash), &lo) && parseCpu(part.substr(dash + 1), &hi) && lo <= hi;
    }
    for (int c = lo; ok && c <= hi; ++c) {
      cpus.push_back(c);
    }
    start = comma + 1;
  }
  if (!ok) {
    *error = "invalid CPU list '" + std::string(text) +
             "': expected CPU numbers and ranges such as 0, 1-3 or 0,2 (each below " +
             std::to_string(CPU_SETSIZE) + ")";
    return false;
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  *out = std::move(cpus);
  return true;
}

std::string formatCpuList(const CpuList& cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) {
      ++j;
    }
    if (!out.empty()) {
      out += ',';
    }
    if (j >= i + 2) {
      out += std::to_string(cpus[i]) + "-" + std::to_string(cpus[j]);
      i = j + 1;
    } else {
      out += std::to_string(cpus[i]);
      ++i;
    }
  }
  return out;
}

std::string describeCpus(const CpuList& cpus) {
  return (cpus.size() == 1 ? "CPU " : "CPUs ") + formatCpuList(cpus);
}

CpuList allowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  CpuList out;
  if (::sched_getaffinity(0, sizeof(set), &set) != 0) {
    return out;
  }
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) {
      out.push_back(c);
    }
  }
  return out;
}

CpuList commonCpus(const CpuList& a, const CpuList& b) {
  CpuList out;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

bool parseCpuFlag(std::string_view flag, std::string_view text, const CpuList& allowed,
                  CpuList* out, std::string* error) {
  CpuList cpus;
  if (!parseCpuList(text, &cpus, error)) {
    *error = std::string(flag) + ": " + *error;
    return false;
  }
  CpuList missing;
  std::set_difference(cpus.begin(), cpus.end(), allowed.begin(), allowed.end(),
                      std::back_inserter(missing));
  if (!missing.empty()) {
    *error = std::string(flag) + " " + std::string(text) + ": " + describeCpus(missing) +
             (missing.size() == 1 ? " is" : " are") +
             " not available here (this process may run on " + describeCpus(allowed) + ")";
    return false;
  }
  *out = std::move(cpus);
  return true;
}

cpu_set_t cpuSetOf(const CpuList& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus) {
    CPU_SET(c, &set);
  }
  return set;
}

bool pinCurrentThread(const CpuList& cpus, std::string* error) {
  if (cpus.empty()) {
    return true;
  }
  const cpu_set_t set = cpuSetOf(cpus);
  if (::sched_setaffinity(0, sizeof(set), &set) != 0) {
    *error = "cannot pin to " + describeCpus(cpus) + ": " + std::strerror(errno);
    return false;
  }
  return true;
}

}  // namespace sp::bench
