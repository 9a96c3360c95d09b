// Reading the files a configuration names: the YAML config, a nutcracker.yml, a Codis dump.
#pragma once

#include <string>

namespace sp::config {

// The whole file at `path` into *text; false with *error ("cannot open: <reason>" or "cannot
// read: <reason>"), to which the caller adds the path.
bool readTextFile(const std::string& path, std::string* text, std::string* error);

}  // namespace sp::config
