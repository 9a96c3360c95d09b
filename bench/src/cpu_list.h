// CpuList: the CPUs a part of a benchmark may run on (--proxy-cpus, --shard-cpus, --client-cpus),
// written as taskset and cpuset write them ("0", "1-3", "0,2,4-5"), checked against the CPUs this
// process may use before anything starts, and applied with sched_setaffinity.
#pragma once

#include <sched.h>

#include <string>
#include <string_view>
#include <vector>

namespace sp::bench {

// CPU numbers, sorted, without duplicates. Empty: unpinned.
using CpuList = std::vector<int>;

// "0", "1-3", "0,2", "0-1,4": false with a message naming the text for anything else (empty
// parts, descending ranges, numbers of CPU_SETSIZE or more).
bool parseCpuList(std::string_view text, CpuList* out, std::string* error);

// The list as parseCpuList reads it, with runs of three or more as ranges: "0-2,5".
std::string formatCpuList(const CpuList& cpus);

// "CPU 0", "CPUs 1-3", "CPUs 0,2".
std::string describeCpus(const CpuList& cpus);

// The CPUs this process may run on (sched_getaffinity).
CpuList allowedCpus();

// The CPUs in both lists.
CpuList commonCpus(const CpuList& a, const CpuList& b);

// --FLAG LIST: parsed and checked against `allowed`: "invalid value ... for --proxy-cpus: ..." or
// "--proxy-cpus 4: CPU 4 is not available here (this process may run on CPUs 0-1)".
bool parseCpuFlag(std::string_view flag, std::string_view text, const CpuList& allowed,
                  CpuList* out, std::string* error);

// The cpu_set_t of a non-empty list (built before fork, so the child only makes the system call).
cpu_set_t cpuSetOf(const CpuList& cpus);

// Pins the calling thread; an empty list leaves it alone. False with the system's reason.
bool pinCurrentThread(const CpuList& cpus, std::string* error);

}  // namespace sp::bench
