// Reads the shards and the slot table of a Codis product from its configuration dump (the JSON
// `codis-admin --dashboard=ADDR --config-dump` prints): each group that owns slots becomes a
// shard (its first server the primary, the others replicas) with its Codis slots (0..1023).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "config/loader.h"

namespace sp::config {

// Fills *shards ("group<id>", in group id order). Errors: unreadable JSON, a slot with no group,
// a slot being migrated (finish the migration first), a group with slots but no server, a slot
// listed twice. `source` names the dump in errors.
std::vector<ConfigError> parseCodisDump(std::string_view json, const std::string& source,
                                        std::vector<ShardConfig>* shards);
std::vector<ConfigError> loadCodisDump(const std::string& path, std::vector<ShardConfig>* shards);

}  // namespace sp::config
