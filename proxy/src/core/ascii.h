// ASCII case folding for command names and options: RESP commands are case-insensitive ASCII,
// so locale-aware functions are both slower and wrong here.
#pragma once

#include <string_view>

namespace sp {

inline char lowerAscii(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c + ('a' - 'A')) : c;
}

inline bool equalsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) {
    return false;
  }
  for (size_t i = 0; i < a.size(); ++i) {
    if (lowerAscii(a[i]) != lowerAscii(b[i])) {
      return false;
    }
  }
  return true;
}

}  // namespace sp
