// Codis's dump -> ShardConfig list. JSON is read with yaml-cpp (YAML 1.2 is a superset of
// JSON); its exceptions stay in here.
#include "config/codis_dump.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>

#include "config/text_file.h"
#include "config/value_parser.h"
#include "route/placement.h"

namespace sp::config {
namespace {

struct Group {
  std::vector<std::string> servers;  // "host:port", the primary first
  std::vector<SlotRange> slots;
};

void addSlot(uint16_t slot, std::vector<SlotRange>* ranges) {
  if (!ranges->empty() && ranges->back().last + 1 == slot) {
    ranges->back().last = slot;
  } else {
    ranges->push_back({slot, slot});
  }
}

}  // namespace

std::vector<ConfigError> parseCodisDump(std::string_view json, const std::string& source,
                                        std::vector<ShardConfig>* shards) {
  std::vector<ConfigError> errors;
  auto error = [&](const std::string& where, std::string message) {
    errors.push_back({source + ": " + where, std::move(message)});
  };
  YAML::Node root;
  try {
    root = YAML::Load(std::string(json));
  } catch (const YAML::Exception& e) {
    return {{source, std::string("not valid JSON: ") + e.what()}};
  }
  if (!root.IsMap() || !root["slots"].IsSequence() || !root["group"].IsSequence()) {
    return {{source, "expected codis-admin --config-dump output with \"slots\" and \"group\""}};
  }
  try {
    std::map<int, Group> groups;
    for (const YAML::Node& g : root["group"]) {
      Group& group = groups[g["id"].as<int>()];
      if (g["servers"].IsSequence()) {
        for (const YAML::Node& s : g["servers"]) {
          group.servers.push_back(s["server"].as<std::string>());
        }
      }
    }
    std::vector<bool> seen(route::kCodisSlotCount, false);
    std::vector<std::pair<int, int>> slots;  // (slot, group), in dump order
    for (const YAML::Node& s : root["slots"]) {
      const int id = s["id"].as<int>();
      const int group = s["group_id"] ? s["group_id"].as<int>() : 0;
      const std::string where = "slots[" + std::to_string(id) + "]";
      if (id < 0 || id >= route::kCodisSlotCount || seen[static_cast<size_t>(id)]) {
        error(where, "out of range 0..1023 or listed twice");
        continue;
      }
      seen[static_cast<size_t>(id)] = true;
      const YAML::Node action = s["action"];
      if (action && action.IsMap() && action["state"] &&
          !action["state"].as<std::string>().empty()) {
        error(where, "is being migrated (" + action["state"].as<std::string>() +
                         "): finish the migration in Codis, then dump again");
        continue;
      }
      if (group == 0 || groups.count(group) == 0) {
        error(where, "belongs to no group: assign every slot in Codis first");
        continue;
      }
      slots.emplace_back(id, group);
    }
    std::sort(slots.begin(), slots.end());
    for (const auto& [slot, group] : slots) {
      addSlot(static_cast<uint16_t>(slot), &groups[group].slots);
    }
    shards->clear();
    for (const auto& [id, group] : groups) {
      if (group.slots.empty()) {
        continue;  // a spare group: nothing of the product lives there
      }
      const std::string where = "group[" + std::to_string(id) + "]";
      ShardConfig shard;
      shard.name = "group" + std::to_string(id);
      shard.name_given = true;
      shard.slots = group.slots;
      if (group.servers.empty()) {
        error(where, "owns slots but has no server");
        continue;
      }
      if (Status parsed = parseHostPort(group.servers[0], &shard.host, &shard.port); !parsed.ok()) {
        error(where, parsed.message());
        continue;
      }
      for (size_t r = 1; r < group.servers.size(); ++r) {
        Endpoint replica;
        if (Status parsed = parseHostPort(group.servers[r], &replica.host, &replica.port);
            parsed.ok()) {
          shard.replicas.push_back(replica);
        } else {
          error(where, parsed.message());
        }
      }
      shards->push_back(std::move(shard));
    }
  } catch (const YAML::Exception& e) {
    errors.push_back({source, std::string("unexpected shape: ") + e.what()});
  }
  return errors;
}

std::vector<ConfigError> loadCodisDump(const std::string& path, std::vector<ShardConfig>* shards) {
  std::string text;
  if (Status read = readTextFile(path, &text); !read.ok()) {
    return {{"placement.codis_dump", "'" + path + "': " + read.message()}};
  }
  return parseCodisDump(text, path, shards);
}

}  // namespace sp::config
