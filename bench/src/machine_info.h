// MachineInfo: what a report says about where it ran (cores as nproc counts them, CPU model,
// memory, kernel, redis-server and shardproxy versions, the open-file limit), so nobody mistakes
// a 2-core result for a 64-core one.
#pragma once

#include <cstdint>
#include <string>

namespace sp::bench {

struct MachineInfo {
  unsigned nproc = 0;  // CPUs this process may run on (sched_getaffinity), as nproc prints
  std::string cpu_model;
  uint64_t mem_total_kb = 0;
  uint64_t mem_available_kb = 0;
  std::string kernel;
  uint64_t open_files = 0;  // soft RLIMIT_NOFILE after raising it
  std::string date_utc;     // "2024-05-01 12:00:00 UTC"
};

MachineInfo machineInfo();
unsigned onlineCpus();
uint64_t memAvailableKb();

// The first line of `binary --version` ("" when it cannot be run).
std::string versionOf(const std::string& binary);
// The output of `binary --help` (stdout and stderr), "" when it cannot be run; bounded by 5 s.
std::string helpOf(const std::string& binary);

// "- **machine**: 2 CPUs (nproc), Intel(R) ..., 24 GB RAM, Linux 6.1, open files 20000" lines.
std::string machineMarkdown(const MachineInfo& m);

}  // namespace sp::bench
