// ASCII case folding for command names and options: RESP commands are case-insensitive ASCII,
// so locale-aware functions are both slower and wrong here.
#pragma once

#include <string>
#include <string_view>

namespace sp {

inline char lowerAscii(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c + ('a' - 'A')) : c;
}

inline char upperAscii(char c) {
  return c >= 'a' && c <= 'z' ? static_cast<char>(c - ('a' - 'A')) : c;
}

// A copy of `s` with its ASCII letters in capitals (command and subcommand names in replies).
inline std::string upperAscii(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    c = upperAscii(c);
  }
  return out;
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
