// CpuBudget: which CPUs each part of a matrix or scenario run had — the proxy (shardproxy and
// twemproxy), the redis-server shards and shardbench's own client threads — as every report
// states it ("proxy: CPU 0; shards: CPU 1; client: CPU 1"), with a warning for each pair of parts
// that may share a CPU, because then every number includes their contention.
#pragma once

#include <string>
#include <vector>

#include "cpu_list.h"
#include "json_writer.h"

namespace sp::bench {

struct CpuBudget {
  CpuList proxy;              // empty: unpinned
  CpuList shards;             // empty: unpinned
  CpuList client;             // empty: unpinned
  CpuList available;          // the CPUs shardbench may run on (what unpinned parts get)
  bool servers_local = true;  // false: the proxy and shards were not started by shardbench

  bool pinned() const { return !proxy.empty() || !shards.empty() || !client.empty(); }
  // "proxy: CPU 0; shards: CPU 1; client: CPU 1", or "unpinned: ..." when nothing was pinned.
  std::string text() const;
  // "the shards and the client share CPU 1", one per pair of parts that may share a CPU; none
  // when nothing was pinned (the text says so) or the servers are not ours.
  std::vector<std::string> warnings() const;
};

// "- **CPU budget**: ...\n" and a "- **warning**: ..." line per warning.
std::string cpuBudgetMarkdown(const CpuBudget& budget);
// "cpu_budget": {"proxy": "0" or "unpinned", "shards", "client", "text", "warnings": [...]}.
void cpuBudgetJson(JsonWriter& j, const CpuBudget& budget);

}  // namespace sp::bench
