// Whole-file reads for the config loaders.
#include "config/text_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace sp::config {

Status readTextFile(const std::string& path, std::string* text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status::failure(std::string("cannot open: ") + std::strerror(errno));
  }
  std::ostringstream content;
  content << in.rdbuf();
  if (in.bad()) {
    return Status::failure(std::string("cannot read: ") + std::strerror(errno));
  }
  *text = content.str();
  return Status();
}

}  // namespace sp::config
