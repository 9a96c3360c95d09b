// Reading the files a configuration names: the YAML config, a nutcracker.yml, a Codis dump.
#pragma once

#include <string>

#include "core/status.h"

namespace sp::config {

// The whole file at `path` into *text; fails with "cannot open: <reason>" or "cannot
// read: <reason>", to which the caller adds the path.
Status readTextFile(const std::string& path, std::string* text);

}  // namespace sp::config
