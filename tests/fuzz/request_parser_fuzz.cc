// Fuzz target for RequestParser: the input is parsed into frames three ways — whole, in two
// pieces split at a point derived from the first two bytes, and one byte at a time — and all
// three must give the same frames (arguments compared as strings) and the same final status and
// error. Along the way: consumed is 0 unless kOk, every argument views the consumed bytes (or
// frame.scratch for quoted inline arguments), bytesNeeded() is a true lower bound, and errors are
// sticky. Small limits make every limit reachable.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "resp/request_parser.h"

namespace {

using sp::resp::ParseError;
using sp::resp::ParserLimits;
using sp::resp::ParseStatus;
using sp::resp::RequestFrame;
using sp::resp::RequestParser;

constexpr ParserLimits kLimits{.max_bulk_len = 40, .max_array_len = 6, .max_inline_len = 48};

#define FUZZ_CHECK(cond) \
  do {                   \
    if (!(cond)) {       \
      __builtin_trap();  \
    }                    \
  } while (0)

struct Frame {
  std::vector<std::string> args;
  bool is_inline = false;
  bool operator==(const Frame&) const = default;
};

struct Outcome {
  std::vector<Frame> frames;
  ParseStatus status = ParseStatus::kIncomplete;
  ParseError error = ParseError::kNone;
  size_t consumed = 0;  // total bytes consumed by the frames
};

bool within(std::string_view inner, const char* begin, size_t size) {
  return inner.empty() || (inner.data() >= begin && inner.data() + inner.size() <= begin + size);
}

// Feeds the chunks in order, as successive reads from a socket, into a buffer that drops
// consumed frames from its front. With `move`, the bytes are copied to a fresh allocation before
// each call so that any pointer kept from an earlier call is caught by ASAN.
Outcome feed(const std::vector<std::string_view>& chunks, bool move) {
  RequestParser parser(kLimits);
  RequestFrame frame;
  Outcome o;
  std::string buffer;
  size_t needed = 0;  // largest bytesNeeded() seen for the current frame
  for (const std::string_view chunk : chunks) {
    buffer.append(chunk);
    for (;;) {
      const std::string moved = move ? buffer : std::string();
      const std::string& in = move ? moved : buffer;
      size_t consumed = 1;
      o.status = parser.parse(in, &consumed, &frame);
      o.error = parser.error();
      if (o.status == ParseStatus::kIncomplete) {
        FUZZ_CHECK(consumed == 0);
        FUZZ_CHECK(o.error == ParseError::kNone);
        const size_t need = parser.bytesNeeded();
        FUZZ_CHECK(need == 0 || need > in.size());
        needed = need > needed ? need : needed;
        break;
      }
      if (o.status == ParseStatus::kError) {
        FUZZ_CHECK(consumed == 0);
        FUZZ_CHECK(o.error != ParseError::kNone);
        size_t again = 1;
        FUZZ_CHECK(parser.parse(in, &again, &frame) == ParseStatus::kError && again == 0);
        break;
      }
      FUZZ_CHECK(o.status == ParseStatus::kOk);
      FUZZ_CHECK(consumed > 0 && consumed <= in.size());
      FUZZ_CHECK(needed <= consumed);
      FUZZ_CHECK(parser.bytesNeeded() == 0);
      FUZZ_CHECK(frame.args.size() <=
                 (frame.is_inline ? kLimits.max_inline_len : kLimits.max_array_len));
      Frame f;
      f.is_inline = frame.is_inline;
      for (const std::string_view a : frame.args) {
        FUZZ_CHECK(within(a, in.data(), consumed) ||
                   (frame.is_inline && within(a, frame.scratch.data(), frame.scratch.size())));
        FUZZ_CHECK(frame.is_inline || a.size() <= kLimits.max_bulk_len);
        f.args.emplace_back(a);
      }
      o.frames.push_back(std::move(f));
      o.consumed += consumed;
      buffer.erase(0, consumed);
      needed = 0;
    }
    if (o.status == ParseStatus::kError) {
      break;
    }
  }
  return o;
}

void expectSame(const Outcome& a, const Outcome& b) {
  FUZZ_CHECK(a.frames == b.frames);
  FUZZ_CHECK(a.status == b.status);
  FUZZ_CHECK(a.error == b.error);
  FUZZ_CHECK(a.consumed == b.consumed);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const Outcome whole = feed({input}, false);
  FUZZ_CHECK(whole.consumed <= size);

  size_t split = 0;
  if (size >= 2) {
    split = ((static_cast<size_t>(data[0]) << 8) | data[1]) % (size + 1);
  } else if (size == 1) {
    split = data[0] % 2;
  }
  expectSame(whole, feed({input.substr(0, split), input.substr(split)}, true));

  std::vector<std::string_view> bytes;
  bytes.reserve(size);
  for (size_t i = 0; i < size; ++i) {
    bytes.push_back(input.substr(i, 1));
  }
  expectSame(whole, feed(bytes, false));
  return 0;
}
