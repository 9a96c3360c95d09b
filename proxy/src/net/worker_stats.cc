// Label mappings of the per-worker statistics and the stable per-shard table.
#include "net/worker_stats.h"

namespace sp::net {

CloseReason closeReason(std::string_view why) {
  if (why == "client closed") {
    return CloseReason::kClientClosed;
  }
  if (why == "quit") {
    return CloseReason::kQuit;
  }
  if (why == "output buffer limit") {
    return CloseReason::kOutputLimit;
  }
  if (why == "refused") {
    return CloseReason::kMaxClients;
  }
  if (why == "shutdown") {
    return CloseReason::kShutdown;
  }
  if (why == "out of memory") {
    return CloseReason::kOutOfMemory;
  }
  if (why == "idle timeout") {
    return CloseReason::kIdleTimeout;
  }
  return CloseReason::kError;
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
