// --verify: every SET value starts with a header naming its key number, the run and a sequence
// number ("sbv1:<key>:<run>:<seq>:" then filler), and every GET is checked against the last value
// the same connection wrote to that key. Each connection owns its own keys (key min + slot +
// i * slots), so the expected value is known without any sharing between connections or threads,
// and a pipelined GET after a SET on the same connection must see that SET (replies come in order).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "key_generator.h"

namespace sp::bench {

class KeyOwnership {
 public:
  // Keys of connection `slot` (of `slots`): min + slot + i * slots, i in [0, partitionSize).
  static uint64_t partitionSize(const KeyRange& range, uint32_t slot, uint32_t slots) {
    const uint64_t size = range.size();
    return slot >= size ? 0 : (size - slot + slots - 1) / slots;
  }
  static uint64_t keyOf(const KeyRange& range, uint32_t slot, uint32_t slots, uint64_t index) {
    return range.min + slot + index * slots;
  }
};

// What one connection slot wrote; lives for the whole run (all phases and reconnects).
struct VerifySlot {
  static constexpr uint32_t kNeverWritten = 0;
  static constexpr uint32_t kUnknown = UINT32_MAX;  // a SET was lost with its connection
  std::vector<uint32_t> last_seq;                   // per owned key index
  uint32_t next_seq = 1;

  uint32_t takeSeq() {
    const uint32_t s = next_seq++;
    if (next_seq == kUnknown) {
      next_seq = 1;  // 4 billion writes on one connection: wrap rather than collide with kUnknown
    }
    return s;
  }
};

enum class VerifyResult : uint8_t {
  kOk,          // the expected value (or a miss on a key this run never wrote)
  kUnverified,  // a key this run never wrote holds someone else's value: nothing to compare
  kMismatch,
};

class Verifier {
 public:
  static constexpr size_t kMaxHeader = 64;

  // Writes the header into buf (kMaxHeader bytes) and returns its length.
  static size_t writeHeader(char* buf, uint64_t key, uint32_t run_id, uint32_t seq);

  // Checks a GET result (`payload` null for a miss) of key `key` whose expected sequence number
  // is `expected` (kNeverWritten, kUnknown or a seq). On kMismatch, *why says what was wrong.
  static VerifyResult check(bool is_null, std::string_view payload, uint64_t key, uint32_t run_id,
                            uint32_t expected, std::string* why);
};

}  // namespace sp::bench
