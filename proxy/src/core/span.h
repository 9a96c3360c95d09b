// Byte spans used by the parsers: a view into a buffer owned by someone else.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace sp {

// Offset/length of a piece of a frame, relative to the start of the frame's buffer. Offsets stay
// valid when a buffer is moved or grown, unlike pointers.
struct Slice {
  uint32_t offset = 0;
  uint32_t length = 0;

  std::string_view in(const char* base) const { return {base + offset, length}; }
  std::string_view in(std::string_view base) const { return base.substr(offset, length); }
};

}  // namespace sp
