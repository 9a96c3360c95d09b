// Reads a twemproxy (nutcracker) configuration file as it is: one pool becomes a Config with
// twemproxy placement over the pool's servers, so shardproxy takes the pool over with every key
// where nutcracker put it. docs/migrating.md lists the mapping key by key.
#pragma once

#include <string>
#include <vector>

#include "config/config.h"
#include "config/loader.h"

namespace sp::config {

// Fills *out (from defaults) with `pool` of the nutcracker.yml text; `pool` may be empty when the
// file has one pool. Keys shardproxy accepts with another meaning or ignores are described in
// *notes (said once at start-up); keys it cannot honour (redis: false, redis_db other than 0, a
// Unix socket listen address) are errors. `source` names the file in errors.
std::vector<ConfigError> loadTwemproxyYaml(std::string_view yaml_text, const std::string& source,
                                           const std::string& pool, Config* out,
                                           std::vector<std::string>* notes);
std::vector<ConfigError> loadTwemproxyFile(const std::string& path, const std::string& pool,
                                           Config* out, std::vector<std::string>* notes);

// The pool names of a nutcracker.yml, in file order; *errors says why when it cannot be read.
std::vector<std::string> twemproxyPoolNames(const std::string& path,
                                            std::vector<ConfigError>* errors);

}  // namespace sp::config
