// CommandTable over the generated data (command_table_data.inc): an allocation-free,
// case-insensitive name index, and key extraction following Redis 7's key-spec semantics
// (db.c getKeysUsingKeySpecs / getKeysUsingLegacyRangeSpec).
#include "resp/command_table.h"

#include <algorithm>
#include <array>
#include <climits>
#include <cstddef>
#include <iterator>
#include <string_view>

#include "core/ascii.h"
#include "core/assert.h"

namespace sp::resp {
namespace {

#include "resp/command_table_data.inc"

// Longest name looked up: a top-level command, or "container|subcommand". Redis 7.0's longest
// is "cluster|count-failure-reports" (29); anything longer is simply unknown.
constexpr size_t kMaxTopLevelName = 32;
constexpr size_t kMaxFullName = 64;

// FNV-1a, fed one (lowercased) byte at a time so a lookup hashes while it copies.
struct Fnv1a {
  uint32_t h = 2166136261u;
  void add(char c) { h = (h ^ static_cast<uint8_t>(c)) * 16777619u; }
};

// Open-addressing hash index of every command and subcommand by full lowercase name
// ("get", "object|encoding"). Built once; lookups never allocate.
class NameIndex {
 public:
  void insert(const CommandInfo* cmd) {
    Fnv1a f;
    for (char c : cmd->name) {
      f.add(c);
    }
    for (size_t i = f.h & kMask;; i = (i + 1) & kMask) {
      SP_ASSERT(slots_[i].cmd == nullptr || slots_[i].cmd->name != cmd->name);
      if (slots_[i].cmd == nullptr) {
        slots_[i] = {f.h, cmd};
        ++size_;
        SP_ASSERT(size_ * 2 <= kSlots);
        return;
      }
    }
  }

  const CommandInfo* find(std::string_view lower, uint32_t hash) const {
    for (size_t i = hash & kMask;; i = (i + 1) & kMask) {
      const Slot& s = slots_[i];
      if (s.cmd == nullptr) {
        return nullptr;
      }
      if (s.hash == hash && s.cmd->name == lower) {
        return s.cmd;
      }
    }
  }

 private:
  static constexpr size_t kSlots = 1024;  // a power of two, at least twice the entries
  static constexpr size_t kMask = kSlots - 1;
  struct Slot {
    uint32_t hash = 0;
    const CommandInfo* cmd = nullptr;
  };
  std::array<Slot, kSlots> slots_{};
  size_t size_ = 0;
};

const NameIndex& nameIndex() {
  static const NameIndex index = [] {
    NameIndex idx;
    size_t subs = 0;
    for (size_t i = 0; i < std::size(kCommands); ++i) {
      const CommandInfo& c = kCommands[i];
      SP_ASSERT(i == 0 || kCommands[i - 1].name < c.name);
      idx.insert(&c);
      for (const CommandInfo& s : c.subcommands) {
        idx.insert(&s);
        ++subs;
      }
    }
    SP_ASSERT(std::size(kCommands) == kTopLevelCount && subs == kSubcommandCount);
    return idx;
  }();
  return index;
}

// Lowercases `name` into buf after `used` bytes already there (and already hashed into *f).
// Returns the whole name, or an empty view when it does not fit.
std::string_view appendLower(std::string_view name, char* buf, size_t used, size_t cap, Fnv1a* f) {
  if (name.empty() || name.size() > cap - used) {
    return {};
  }
  for (char c : name) {
    c = lowerAscii(c);
    f->add(c);
    buf[used++] = c;
  }
  return {buf, used};
}

// Strict non-negative decimal, as Redis' string2ll accepts it ("0", "12"; not "012", "+1",
// " 1"). False for anything else or a value above `max`.
bool parseCount(std::string_view s, int64_t max, int64_t* out) {
  if (s.empty() || s.size() > 18 || (s[0] == '0' && s.size() > 1)) {
    return false;
  }
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') {
      return false;
    }
    v = v * 10 + (c - '0');
  }
  if (v > max) {
    return false;
  }
  *out = v;
  return true;
}

// The legacy (first, last, step) range of COMMAND INFO; used when a spec is "unknown".
bool legacyKeys(const CommandInfo& cmd, int argc, std::vector<uint32_t>* keys) {
  if (cmd.first_key <= 0) {
    return true;
  }
  const int last = cmd.last_key < 0 ? argc + cmd.last_key : cmd.last_key;
  const int step = cmd.key_step > 0 ? cmd.key_step : 1;
  for (int i = cmd.first_key; i <= last; i += step) {
    if (i >= argc) {
      return false;
    }
    keys->push_back(static_cast<uint32_t>(i));
  }
  return true;
}

bool specKeys(const CommandInfo& cmd, const KeySpec& spec, std::span<const std::string_view> args,
              std::vector<uint32_t>* keys) {
  const int argc = static_cast<int>(args.size());
  int first = 0;
  switch (spec.begin) {
    case KeySpec::Begin::kIndex:
      first = spec.begin_index;
      break;
    case KeySpec::Begin::kKeyword: {
      // From startfrom to the second-to-last argument, or backwards from argc+startfrom down
      // to argument 2; the keys begin after the keyword.
      const int from = spec.begin_keyword_startfrom;
      const int start = from > 0 ? from : argc + from;
      const int end = from > 0 ? argc - 1 : 1;
      const int dir = start <= end ? 1 : -1;
      for (int i = start; i != end; i += dir) {
        if (i >= argc || i < 1) {
          break;
        }
        if (equalsIgnoreCase(args[static_cast<size_t>(i)], spec.begin_keyword)) {
          first = i + 1;
          break;
        }
      }
      if (first == 0) {
        return true;  // keyword absent: this spec names no key
      }
      break;
    }
    case KeySpec::Begin::kUnknown:
      return legacyKeys(cmd, argc, keys);
  }

  int last = 0;
  int step = 1;
  switch (spec.find) {
    case KeySpec::Find::kRange:
      step = spec.range_keystep;
      if (spec.range_lastkey >= 0) {
        last = first + spec.range_lastkey;
      } else if (spec.range_limit <= 0) {
        last = argc + spec.range_lastkey;
      } else {
        // Only the first 1/limit of the remaining arguments (XREAD STREAMS k1 k2 id1 id2).
        last = first + ((argc - first) / spec.range_limit + spec.range_lastkey);
      }
      break;
    case KeySpec::Find::kKeyNum: {
      step = spec.keynum_keystep;
      if (spec.keynum_index < 0 || spec.keynum_index >= argc - first) {
        return false;
      }
      int64_t numkeys = 0;
      if (!parseCount(args[static_cast<size_t>(first + spec.keynum_index)], argc, &numkeys)) {
        return false;
      }
      first += spec.keynum_firstkey;
      if (numkeys == 0) {
        return true;  // EVAL script 0: no keys (the command itself judges whether that is valid)
      }
      last = first + static_cast<int>(numkeys) - 1;
      break;
    }
    case KeySpec::Find::kUnknown:
      return legacyKeys(cmd, argc, keys);
  }

  if (first < 1 || last >= argc || last < first || step < 1) {
    return false;
  }
  for (int i = first; i <= last; i += step) {
    keys->push_back(static_cast<uint32_t>(i));
  }
  return true;
}

}  // namespace

std::string_view CommandTable::redisVersion() { return kRedisVersion; }

const CommandTable& CommandTable::instance() {
  static const CommandTable table;
  nameIndex();  // built once, before the first lookup
  return table;
}

const CommandInfo* CommandTable::find(std::string_view name) const {
  char buf[kMaxTopLevelName];
  Fnv1a f;
  const std::string_view lower = appendLower(name, buf, 0, sizeof buf, &f);
  if (lower.empty()) {
    return nullptr;
  }
  const CommandInfo* cmd = nameIndex().find(lower, f.h);
  // The index also holds "container|sub" names; a top-level lookup must not find those.
  return (cmd != nullptr && lower.find('|') == std::string_view::npos) ? cmd : nullptr;
}

const CommandInfo* CommandTable::resolve(std::span<const std::string_view> args) const {
  if (args.empty()) {
    return nullptr;
  }
  const CommandInfo* cmd = find(args[0]);
  if (cmd == nullptr || !cmd->has(kCmdContainer) || args.size() < 2) {
    return cmd;
  }
  char buf[kMaxFullName];
  Fnv1a f;
  for (char c : cmd->name) {
    f.add(c);
  }
  f.add('|');
  std::copy(cmd->name.begin(), cmd->name.end(), buf);
  buf[cmd->name.size()] = '|';
  const std::string_view full = appendLower(args[1], buf, cmd->name.size() + 1, sizeof buf, &f);
  if (full.empty()) {
    return cmd;
  }
  const CommandInfo* sub = nameIndex().find(full, f.h);
  return sub != nullptr ? sub : cmd;
}

std::span<const CommandInfo> CommandTable::commands() const { return kCommands; }

CommandSet::CommandSet(std::span<const std::string> names) {
  const CommandTable& table = CommandTable::instance();
  const std::span<const CommandInfo> all = table.commands();
  base_ = all.data();
  top_.assign(all.size(), 0);
  for (const std::string& entry : names) {
    std::string name = entry;  // "function kill" or "function|kill"
    std::replace(name.begin(), name.end(), ' ', '|');
    const size_t bar = name.find('|');
    const CommandInfo* top = table.find(std::string_view(name).substr(0, bar));
    if (top == nullptr) {
      continue;
    }
    if (bar == std::string::npos) {
      top_[static_cast<size_t>(top - all.data())] = 1;
      continue;
    }
    const std::string_view args[] = {top->name, std::string_view(name).substr(bar + 1)};
    const CommandInfo* sub = table.resolve(args);
    if (sub != top) {
      subs_.push_back(sub);
    }
  }
}

bool CommandSet::containsSub(const CommandInfo* cmd) const {
  return std::find(subs_.begin(), subs_.end(), cmd) != subs_.end();
}

bool arityOk(const CommandInfo& cmd, size_t argc) {
  if (cmd.arity >= 0) {
    return argc == static_cast<size_t>(cmd.arity);
  }
  return argc >= static_cast<size_t>(-static_cast<int64_t>(cmd.arity));
}

bool extractKeys(const CommandInfo& cmd, std::span<const std::string_view> args,
                 std::vector<uint32_t>* keys) {
  if (args.size() > static_cast<size_t>(INT_MAX / 2)) {
    return false;
  }
  const size_t base = keys->size();
  if (cmd.key_specs.empty()) {
    if (!legacyKeys(cmd, static_cast<int>(args.size()), keys)) {
      return false;
    }
  }
  for (const KeySpec& spec : cmd.key_specs) {
    if (!specKeys(cmd, spec, args, keys)) {
      return false;
    }
  }
  // Specs each yield keys in order, but several specs may interleave (GEORADIUS key ... STORE d)
  // or repeat (SORT's unknown spec falls back to the legacy range).
  const auto begin = keys->begin() + static_cast<std::ptrdiff_t>(base);
  if (!std::is_sorted(begin, keys->end())) {
    std::sort(begin, keys->end());
  }
  keys->erase(std::unique(begin, keys->end()), keys->end());
  return true;
}

}  // namespace sp::resp
