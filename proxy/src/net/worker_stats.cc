// Label mappings of the per-worker statistics, the stable per-shard table, and the per-command
// and per-error-code tables of INFO commandstats / latencystats / errorstats.
#include "net/worker_stats.h"

#include <algorithm>
#include <cstring>

#include "core/assert.h"

namespace sp::net {
namespace {

// Every command of the table (top-level and subcommands) with a dense index, and a
// pointer-keyed open-addressing index over them: built once, then read-only from every thread.
struct CommandIndex {
  static constexpr size_t kSlots = 1024;  // a power of two, at least twice the commands
  std::vector<const resp::CommandInfo*> commands;
  std::array<int32_t, kSlots> slots{};

  static size_t hash(const resp::CommandInfo* cmd) {
    const auto v = reinterpret_cast<uintptr_t>(cmd);
    return static_cast<size_t>((v >> 3) * 0x9E3779B97F4A7C15ull >> 54) & (kSlots - 1);
  }

  CommandIndex() {
    slots.fill(-1);
    for (const resp::CommandInfo& c : resp::CommandTable::instance().commands()) {
      add(&c);
      for (const resp::CommandInfo& sub : c.subcommands) {
        add(&sub);
      }
    }
  }

  void add(const resp::CommandInfo* cmd) {
    SP_ASSERT(commands.size() * 2 < kSlots);
    for (size_t i = hash(cmd);; i = (i + 1) & (kSlots - 1)) {
      if (slots[i] < 0) {
        slots[i] = static_cast<int32_t>(commands.size());
        commands.push_back(cmd);
        return;
      }
    }
  }
};

const CommandIndex& commandIndex() {
  static const CommandIndex index;
  return index;
}

}  // namespace

CommandStatsTable::CommandStatsTable() {
  const CommandIndex& index = commandIndex();
  commands_ = index.commands.data();
  slots_ = index.slots.data();
  size_ = index.commands.size();
  stats_ = std::make_unique<CommandStats[]>(size_);
}

int32_t CommandStatsTable::indexOf(const resp::CommandInfo* cmd) const {
  if (cmd == nullptr) {
    return -1;
  }
  constexpr size_t kMask = CommandIndex::kSlots - 1;
  for (size_t i = CommandIndex::hash(cmd);; i = (i + 1) & kMask) {
    const int32_t at = slots_[i];
    if (at < 0 || commands_[at] == cmd) {
      return at;
    }
  }
}

void ErrorCodes::count(std::string_view reply) {
  total_.add();
  std::string_view text;
  if (reply.starts_with('-')) {
    text = reply.substr(1);
  } else if (reply.starts_with('!')) {
    const size_t lf = reply.find('\n');
    text = lf == std::string_view::npos ? std::string_view() : reply.substr(lf + 1);
  }
  const size_t end = text.find_first_of(" \r\n");
  std::string_view code = text.substr(0, std::min(end, text.size()));
  if (code.empty() || code.size() > kMaxCodeLen) {
    return;  // not a code redis-server would track either
  }
  const size_t used = used_.load(std::memory_order_relaxed);  // this worker is the only writer
  for (size_t i = 0; i < used; ++i) {
    Entry& e = entries_[i];
    if (e.len == code.size() && std::memcmp(e.code, code.data(), code.size()) == 0) {
      e.count.add();
      return;
    }
  }
  if (used == kMaxCodes) {
    return;
  }
  Entry& e = entries_[used];
  std::memcpy(e.code, code.data(), code.size());
  e.len = static_cast<uint8_t>(code.size());
  e.count.add();
  used_.store(used + 1, std::memory_order_release);
}

std::string_view ProtocolErrors::reasonName(resp::ParseError reason) {
  return reason == resp::ParseError::kNone ? "unexpected_reply" : resp::errorName(reason);
}

void ShardStatsTable::bind(const std::vector<std::string>& names) {
  std::lock_guard<std::mutex> lock(mu_);
  current_.clear();
  current_names_ = names;
  for (const std::string& name : names) {
    ShardStats* stats = nullptr;
    for (size_t i = 0; i < all_names_.size(); ++i) {
      if (all_names_[i] == name) {
        stats = all_[i].get();
        break;
      }
    }
    if (stats == nullptr) {
      all_.push_back(std::make_unique<ShardStats>());
      all_names_.push_back(name);
      stats = all_.back().get();
    }
    current_.push_back(stats);
  }
}

}  // namespace sp::net
