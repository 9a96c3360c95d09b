// Whole-file reads for the config loaders.
#include "config/text_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace sp::config {

bool readTextFile(const std::string& path, std::string* text, std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = std::string("cannot open: ") + std::strerror(errno);
    return false;
  }
  std::ostringstream content;
  content << in.rdbuf();
  if (in.bad()) {
    *error = std::string("cannot read: ") + std::strerror(errno);
    return false;
  }
  *text = content.str();
  return true;
}

}  // namespace sp::config
