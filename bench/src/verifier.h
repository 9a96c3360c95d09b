// --verify: every SET value starts with a header naming its key number, the run and a sequence
// number ("sbv1:<key>:<run>:<seq>:" then filler), and every GET is checked against what the same
// connection's earlier SETs of that key can have left. Each connection owns its own keys (key min
// + slot + i * slots), so the expected value is known without any sharing between connections or
// threads. Replies on one connection come in order, so a key's state is updated when a SET's reply
// is read and a GET is checked when its own reply is read: by then every request sent before the
// GET has been answered (or lost), and none sent after it can show in its value.
//
// The state of one key (KeyState) moves only on replies; s is the seq of the SET replied to:
//
//   state             SET +OK       SET error reply, or no reply   GET nil, --verify-allow-loss
//   empty             known{s}      unknown{-, s}                  empty
//   known{A}          known{s}      unknown{A, s}                  empty        (counted as lost)
//   unknown{A?, L}    known{s}      unknown{A?, s}                 unknown{-, L} (lost, if A)
//
// What a GET may return:
//   empty             nil (ok), or a value older than the run (unverified: another run or tool)
//   known{A}          seq A (ok)
//   unknown{A?, L}    A, or any seq in (A, L] (unverified: those writes may or may not have been
//                     applied); without A, also nil or a value older than the run (unverified)
//   nil for A         a lost write: a mismatch, or "lost" under --verify-allow-loss (no SET,
//                     applied or not, leaves a key empty)
//   anything else     a mismatch: another key's value, a seq this connection never wrote to the
//                     key (later than its last write of it), an older seq than the last acked
//                     one, another run's value or a garbled one once a write was acked.
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

// What the replies so far say about one key: 8 bytes per key of the range.
struct KeyState {
  static constexpr uint32_t kNone = 0;  // never a seq
  uint32_t acked = kNone;    // seq of the last SET answered +OK, kNone if none (or read as lost)
  uint32_t unknown = kNone;  // seq of the last SET of unknown outcome after it, kNone if none

  bool known() const { return unknown == kNone; }
};

enum class VerifyResult : uint8_t {
  kOk,          // the one value the key can hold (or a miss on a key this run never wrote)
  kUnverified,  // one of several possible values, or a value that predates the run
  kLost,        // --verify-allow-loss: nil although a write was acknowledged
  kMismatch,
};

class Verifier {
 public:
  static constexpr size_t kMaxHeader = 64;

  // Writes the header into buf (kMaxHeader bytes) and returns its length.
  static size_t writeHeader(char* buf, uint64_t key, uint32_t run_id, uint32_t seq);

  // Checks a GET result (`is_null` for a miss, else `payload`) of key `key` in state `state`.
  // allow_loss: a nil for an acknowledged write is kLost rather than kMismatch. On kMismatch,
  // *why says what was wrong.
  static VerifyResult check(const KeyState& state, bool is_null, std::string_view payload,
                            uint64_t key, uint32_t run_id, bool allow_loss, std::string* why);
};

// What one connection slot wrote; lives for the whole run (all phases and reconnects), and only
// the one connection that owns the slot touches it.
struct VerifySlot {
  std::vector<KeyState> keys;  // per owned key index
  uint32_t next_seq = 1;

  uint32_t takeSeq() {
    const uint32_t s = next_seq++;
    if (next_seq == KeyState::kNone) {
      next_seq = 1;  // 4 billion writes on one connection: wrap (the checks compare modulo 2^32)
    }
    return s;
  }

  // The reply to a SET of key `index` with `seq`: +OK, or an error (or no reply at all).
  void onSetAcked(uint64_t index, uint32_t seq) { keys[index] = KeyState{seq, KeyState::kNone}; }
  void onSetUnknown(uint64_t index, uint32_t seq) { keys[index].unknown = seq; }

  // The reply to a GET of key `index` (number `key`): checks it and, when the read shows that
  // the acknowledged value was lost (kLost), forgets that value.
  VerifyResult onGet(uint64_t index, bool is_null, std::string_view payload, uint64_t key,
                     uint32_t run_id, bool allow_loss, std::string* why) {
    const VerifyResult r =
        Verifier::check(keys[index], is_null, payload, key, run_id, allow_loss, why);
    if (r == VerifyResult::kLost) {
      keys[index].acked = KeyState::kNone;
    }
    return r;
  }
};

}  // namespace sp::bench
