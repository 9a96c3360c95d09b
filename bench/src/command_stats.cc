// Counting and merging report rows.
#include "command_stats.h"

#include <algorithm>

namespace sp::bench {

void ErrorCounts::add(std::string_view kind, uint64_t count, std::string_view example) {
  for (Entry& e : entries_) {
    if (e.kind == kind) {
      e.count += count;
      return;
    }
  }
  entries_.push_back({std::string(kind), count, std::string(example.substr(0, 200))});
}

void ErrorCounts::merge(const ErrorCounts& other) {
  for (const Entry& e : other.entries_) {
    add(e.kind, e.count, e.example);
  }
}

uint64_t ErrorCounts::total() const {
  uint64_t n = 0;
  for (const Entry& e : entries_) {
    n += e.count;
  }
  return n;
}

uint64_t ErrorCounts::count(std::string_view kind) const {
  for (const Entry& e : entries_) {
    if (e.kind == kind) {
      return e.count;
    }
  }
  return 0;
}

std::string_view errorKind(std::string_view reply) {
  if (!reply.empty() && (reply[0] == '-' || reply[0] == '!')) {
    reply.remove_prefix(1);
  }
  size_t end = 0;
  while (end < reply.size() && reply[end] != ' ' && reply[end] != '\r' && reply[end] != '\n') {
    ++end;
  }
  if (end == 0) {
    return "ERR";
  }
  return reply.substr(0, std::min<size_t>(end, 32));
}

void CommandStats::merge(const CommandStats& other) {
  ops += other.ops;
  hits += other.hits;
  misses += other.misses;
  bytes_tx += other.bytes_tx;
  bytes_rx += other.bytes_rx;
  errors.merge(other.errors);
  latency.merge(other.latency);
}

void RowResult::computeRates(double seconds) {
  if (seconds <= 0) {
    ops_per_sec = hits_per_sec = misses_per_sec = kb_per_sec = 0;
    return;
  }
  ops_per_sec = static_cast<double>(stats.ops) / seconds;
  hits_per_sec = static_cast<double>(stats.hits) / seconds;
  misses_per_sec = static_cast<double>(stats.misses) / seconds;
  kb_per_sec = static_cast<double>(stats.bytes_tx + stats.bytes_rx) / 1024.0 / seconds;
}

void RowResult::mergeRun(const RowResult& other) {
  stats.merge(other.stats);
  has_hits = has_hits || other.has_hits;
  ops_per_sec += other.ops_per_sec;
  hits_per_sec += other.hits_per_sec;
  misses_per_sec += other.misses_per_sec;
  kb_per_sec += other.kb_per_sec;
}

}  // namespace sp::bench
