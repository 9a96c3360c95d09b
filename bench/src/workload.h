// Workload: what a run sends, resolved from the options once: phases (one per -t test, or one
// mixed phase), their compiled command templates with weights and key patterns, the key space
// and the value bytes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "command_template.h"
#include "key_generator.h"
#include "options.h"

namespace sp::bench {

enum class OpKind : uint8_t {
  kOther,
  kSet,  // SET <key> __data__: --verify records what it wrote
  kGet,  // GET <key>: hits and misses are counted, --verify checks the value
};

struct WorkloadCommand {
  std::string row;  // report row: "SET", "Sets", "HSET"
  CommandTemplate tmpl;
  uint32_t ratio = 1;
  KeyPattern pattern = KeyPattern::kRandom;
  OpKind kind = OpKind::kOther;
};

struct Phase {
  std::string name;  // "SET", "LPUSH (needed to benchmark LRANGE)", "ALL STATS"
  std::vector<WorkloadCommand> commands;
  std::vector<uint32_t> cumulative;  // running sum of ratios: picks the command of a position
  bool totals_row = false;           // a mixed phase also reports a Totals row

  uint32_t cycleLength() const { return cumulative.empty() ? 0 : cumulative.back(); }
  // The command at position `pos` of the weighted round robin (pos < cycleLength()): with a
  // 1:10 ratio, one SET then ten GETs, over and over.
  uint32_t commandAt(uint32_t pos) const {
    uint32_t i = 0;
    while (pos >= cumulative[i]) {
      ++i;
    }
    return i;
  }
};

struct Workload {
  std::vector<Phase> phases;
  std::string key_prefix;
  KeyRange keys;
  bool has_key_range = true;
  std::string filler;  // value bytes: data_max plus slack for random offsets
  uint32_t data_min = 0;
  uint32_t data_max = 0;
  bool random_data = false;
  bool data_baked = false;  // fixed 'x' values: already inside the compiled templates
};

// False with a message when a template cannot be compiled.
bool buildWorkload(const Options& options, Workload* out, std::string* error);

}  // namespace sp::bench
