// --verify: key ownership, value headers and every kind of mismatch.
#include "verifier.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <string_view>

namespace sp::bench {
namespace {

std::string value(uint64_t key, uint32_t run, uint32_t seq, size_t size = 40) {
  char buf[Verifier::kMaxHeader];
  std::string v(buf, Verifier::writeHeader(buf, key, run, seq));
  if (v.size() < size) {
    v.append(size - v.size(), 'x');
  }
  return v;
}

TEST(KeyOwnershipTest, PartitionsAreDisjointAndComplete) {
  const KeyRange range{10, 109};  // 100 keys over 7 slots
  std::set<uint64_t> all;
  for (uint32_t s = 0; s < 7; ++s) {
    const uint64_t n = KeyOwnership::partitionSize(range, s, 7);
    EXPECT_EQ(n, s < 2 ? 15u : 14u);  // 100 = 2 * 15 + 5 * 14
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t key = KeyOwnership::keyOf(range, s, 7, i);
      EXPECT_GE(key, 10u);
      EXPECT_LE(key, 109u);
      EXPECT_TRUE(all.insert(key).second);
    }
  }
  EXPECT_EQ(all.size(), 100u);
}

TEST(VerifierTest, HeaderFormat) { EXPECT_EQ(value(42, 0xbeef, 7, 0), "sbv1:42:beef:7:"); }

// Shorthands for the states of the diagram in verifier.h.
KeyState known(uint32_t acked) { return KeyState{acked, KeyState::kNone}; }
KeyState unknown(uint32_t acked, uint32_t last) { return KeyState{acked, last}; }
const KeyState kEmpty{};

VerifyResult check(const KeyState& state, bool is_null, std::string_view payload, std::string* why,
                   bool allow_loss = false) {
  return Verifier::check(state, is_null, payload, 42, 9, allow_loss, why);
}

VerifyResult get(const KeyState& state, const std::string& payload, std::string* why) {
  return check(state, false, payload, why);
}

TEST(VerifierTest, AcceptsTheLastWrite) {
  std::string why;
  EXPECT_EQ(get(known(7), value(42, 9, 7), &why), VerifyResult::kOk) << why;
  // A short --data-size: the header alone is still a valid value.
  EXPECT_EQ(get(known(7), value(42, 9, 7, 0), &why), VerifyResult::kOk) << why;
}

TEST(VerifierTest, MismatchesOfAKnownKey) {
  std::string why;
  EXPECT_EQ(check(known(7), true, {}, &why), VerifyResult::kMismatch);
  EXPECT_NE(why.find("missing"), std::string::npos) << why;
  EXPECT_EQ(get(known(7), value(42, 9, 6), &why), VerifyResult::kMismatch);
  EXPECT_NE(why.find("stale"), std::string::npos) << why;
  EXPECT_EQ(get(known(7), value(42, 9, 8), &why), VerifyResult::kMismatch);
  EXPECT_NE(why.find("later"), std::string::npos) << why;
  EXPECT_EQ(get(known(7), value(43, 9, 7), &why), VerifyResult::kMismatch);
  EXPECT_NE(why.find("key 43"), std::string::npos) << why;
  EXPECT_EQ(get(known(7), value(42, 8, 7), &why), VerifyResult::kMismatch);
  EXPECT_NE(why.find("another run"), std::string::npos) << why;
  EXPECT_EQ(get(known(7), "garbage\x01", &why), VerifyResult::kMismatch);
  EXPECT_NE(why.find("foreign value 'garbage.'"), std::string::npos) << why;
  EXPECT_EQ(get(known(7), "sbv1:42:9:", &why), VerifyResult::kMismatch);  // no seq field
}

TEST(VerifierTest, KeysNeverWrittenByThisRun) {
  std::string why;
  EXPECT_EQ(check(kEmpty, true, {}, &why), VerifyResult::kOk);
  // Left over from another run or another tool: nothing to compare against.
  EXPECT_EQ(get(kEmpty, value(42, 8, 3), &why), VerifyResult::kUnverified);
  EXPECT_EQ(get(kEmpty, "xxxx", &why), VerifyResult::kUnverified);
  // But another key's value, or a value this run claims to have written, is wrong.
  EXPECT_EQ(get(kEmpty, value(41, 8, 3), &why), VerifyResult::kMismatch);
  EXPECT_EQ(get(kEmpty, value(42, 9, 3), &why), VerifyResult::kMismatch);
  EXPECT_NE(why.find("never wrote"), std::string::npos) << why;
}

// acked 3, then a SET with seq 5 answered with an error: 3 or 5 (unverified), nothing else.
TEST(VerifierTest, UnknownKeyAcceptsTheAckedValueOrAnUncertainWrite) {
  std::string why;
  const KeyState k = unknown(3, 5);
  EXPECT_EQ(get(k, value(42, 9, 3), &why), VerifyResult::kUnverified) << why;
  EXPECT_EQ(get(k, value(42, 9, 4), &why), VerifyResult::kUnverified) << why;  // (3, 5]
  EXPECT_EQ(get(k, value(42, 9, 5), &why), VerifyResult::kUnverified) << why;
  // A seq it never wrote (later than its last write), an older one, another key, another run.
  EXPECT_EQ(get(k, value(42, 9, 6), &why), VerifyResult::kMismatch);
  EXPECT_NE(why.find("later"), std::string::npos) << why;
  EXPECT_EQ(get(k, value(42, 9, 2), &why), VerifyResult::kMismatch);
  EXPECT_NE(why.find("stale"), std::string::npos) << why;
  EXPECT_EQ(get(k, value(43, 9, 5), &why), VerifyResult::kMismatch);
  EXPECT_NE(why.find("key 43"), std::string::npos) << why;
  EXPECT_EQ(get(k, value(42, 8, 5), &why), VerifyResult::kMismatch);
  EXPECT_NE(why.find("another run"), std::string::npos) << why;
  EXPECT_EQ(get(k, "garbage", &why), VerifyResult::kMismatch);
  // No SET leaves a key empty: nil means the acknowledged write was lost.
  EXPECT_EQ(check(k, true, {}, &why), VerifyResult::kMismatch);
  EXPECT_NE(why.find("missing"), std::string::npos) << why;
  EXPECT_EQ(check(k, true, {}, &why, true), VerifyResult::kLost);
}

// Nothing acked yet and the only write failed: nil, the failed write or anything older than
// the run are possible; another key's value or a seq after the failed write are not.
TEST(VerifierTest, UnknownKeyNeverAcked) {
  std::string why;
  const KeyState k = unknown(KeyState::kNone, 5);
  EXPECT_EQ(check(k, true, {}, &why), VerifyResult::kUnverified);
  EXPECT_EQ(get(k, value(42, 9, 5), &why), VerifyResult::kUnverified) << why;
  EXPECT_EQ(get(k, value(42, 8, 77), &why), VerifyResult::kUnverified) << why;
  EXPECT_EQ(get(k, "left by another tool", &why), VerifyResult::kUnverified) << why;
  EXPECT_EQ(get(k, value(42, 9, 6), &why), VerifyResult::kMismatch);
  EXPECT_EQ(get(k, value(7, 9, 5), &why), VerifyResult::kMismatch);
}

TEST(VerifierTest, ForeignKeyNumberIsAMismatchInEveryState) {
  for (const KeyState& k : {kEmpty, known(3), unknown(3, 5), unknown(KeyState::kNone, 5)}) {
    std::string why;
    EXPECT_EQ(get(k, value(41, 9, 3), &why), VerifyResult::kMismatch);
    EXPECT_EQ(check(k, false, value(41, 9, 3), &why, true), VerifyResult::kMismatch);
    EXPECT_NE(why.find("key 41"), std::string::npos) << why;
  }
}

TEST(VerifierTest, AllowLossExcusesOnlyANil) {
  std::string why;
  EXPECT_EQ(check(known(7), true, {}, &why, true), VerifyResult::kLost);
  EXPECT_EQ(check(kEmpty, true, {}, &why, true), VerifyResult::kOk);
  EXPECT_EQ(check(known(7), false, value(42, 9, 6), &why, true), VerifyResult::kMismatch);
  EXPECT_NE(why.find("stale"), std::string::npos) << why;
  EXPECT_EQ(check(known(7), false, value(42, 8, 7), &why, true), VerifyResult::kMismatch);
  EXPECT_EQ(check(known(7), false, "garbage", &why, true), VerifyResult::kMismatch);
}

TEST(VerifierTest, UncertainWritesAcrossTheSeqWrap) {
  std::string why;
  const KeyState k = unknown(UINT32_MAX - 1, 2);  // writes UINT32_MAX, 1, 2 failed
  EXPECT_EQ(get(k, value(42, 9, UINT32_MAX - 1), &why), VerifyResult::kUnverified) << why;
  EXPECT_EQ(get(k, value(42, 9, UINT32_MAX), &why), VerifyResult::kUnverified) << why;
  EXPECT_EQ(get(k, value(42, 9, 1), &why), VerifyResult::kUnverified) << why;
  EXPECT_EQ(get(k, value(42, 9, 2), &why), VerifyResult::kUnverified) << why;
  EXPECT_EQ(get(k, value(42, 9, 3), &why), VerifyResult::kMismatch);
  EXPECT_EQ(get(k, value(42, 9, UINT32_MAX - 2), &why), VerifyResult::kMismatch);
}

// The slot drives the state machine from replies, as BenchConnection does.
class VerifySlotTest : public ::testing::Test {
 protected:
  VerifySlotTest() { slot_.keys.assign(4, KeyState{}); }

  VerifyResult read(const std::string& payload, bool allow_loss = false) {
    return slot_.onGet(kIndex, false, payload, 42, 9, allow_loss, &why_);
  }
  VerifyResult readNil(bool allow_loss = false) {
    return slot_.onGet(kIndex, true, {}, 42, 9, allow_loss, &why_);
  }

  static constexpr uint64_t kIndex = 2;
  VerifySlot slot_;
  std::string why_;
};

TEST_F(VerifySlotTest, ErrorReplyMakesTheKeyUnknownUntilTheNextOk) {
  slot_.onSetAcked(kIndex, 3);
  EXPECT_TRUE(slot_.keys[kIndex].known());
  EXPECT_EQ(read(value(42, 9, 3)), VerifyResult::kOk) << why_;
  slot_.onSetUnknown(kIndex, 5);  // -ERR shard ... unavailable
  EXPECT_FALSE(slot_.keys[kIndex].known());
  EXPECT_EQ(read(value(42, 9, 3)), VerifyResult::kUnverified) << why_;
  EXPECT_EQ(read(value(42, 9, 5)), VerifyResult::kUnverified) << why_;
  EXPECT_EQ(read(value(42, 9, 6)), VerifyResult::kMismatch);  // never written
  slot_.onSetUnknown(kIndex, 8);  // another failure (seq 6, 7: other keys)
  EXPECT_EQ(read(value(42, 9, 8)), VerifyResult::kUnverified) << why_;
  EXPECT_EQ(read(value(42, 9, 9)), VerifyResult::kMismatch);
  slot_.onSetAcked(kIndex, 10);  // the next +OK: known again, everything before it is stale
  EXPECT_TRUE(slot_.keys[kIndex].known());
  EXPECT_EQ(read(value(42, 9, 10)), VerifyResult::kOk) << why_;
  EXPECT_EQ(read(value(42, 9, 8)), VerifyResult::kMismatch);
  EXPECT_NE(why_.find("stale"), std::string::npos) << why_;
  EXPECT_EQ(read(value(42, 9, 3)), VerifyResult::kMismatch);
  // Other keys of the slot are untouched.
  EXPECT_EQ(slot_.keys[kIndex - 1].acked, KeyState::kNone);
  EXPECT_TRUE(slot_.keys[kIndex + 1].known());
}

TEST_F(VerifySlotTest, NilAfterAnAckIsAMismatch) {
  slot_.onSetAcked(kIndex, 3);
  EXPECT_EQ(readNil(), VerifyResult::kMismatch);
  EXPECT_NE(why_.find("missing"), std::string::npos) << why_;
  // Without the option the state is unchanged: it is still expected.
  EXPECT_EQ(read(value(42, 9, 3)), VerifyResult::kOk) << why_;
}

TEST_F(VerifySlotTest, NilAfterAnAckIsLostWithAllowLossAndTheValueCannotComeBack) {
  slot_.onSetAcked(kIndex, 3);
  EXPECT_EQ(readNil(true), VerifyResult::kLost);
  // The loss is taken as the new state: the key is empty, and the lost value reappearing
  // (or any other value of this run) is a mismatch.
  EXPECT_EQ(readNil(true), VerifyResult::kOk);
  EXPECT_EQ(read(value(42, 9, 3), true), VerifyResult::kMismatch);
  slot_.onSetAcked(kIndex, 4);
  EXPECT_EQ(read(value(42, 9, 4), true), VerifyResult::kOk) << why_;
  EXPECT_EQ(read(value(42, 9, 3), true), VerifyResult::kMismatch);  // stale is still caught
}

TEST_F(VerifySlotTest, LossWhileWritesAreUncertainKeepsThem) {
  slot_.onSetAcked(kIndex, 3);
  slot_.onSetUnknown(kIndex, 5);
  EXPECT_EQ(readNil(true), VerifyResult::kLost);
  EXPECT_EQ(readNil(true), VerifyResult::kUnverified);  // nothing acked, a write uncertain
  EXPECT_EQ(read(value(42, 9, 5), true), VerifyResult::kUnverified) << why_;
  EXPECT_EQ(read(value(42, 9, 6), true), VerifyResult::kMismatch);
}

TEST(VerifySlotSeqTest, SequenceNumbersSkipTheReservedValue) {
  VerifySlot slot;
  EXPECT_EQ(slot.takeSeq(), 1u);
  EXPECT_EQ(slot.takeSeq(), 2u);
  slot.next_seq = UINT32_MAX;
  EXPECT_EQ(slot.takeSeq(), UINT32_MAX);
  EXPECT_EQ(slot.takeSeq(), 1u);  // never KeyState::kNone
}

}  // namespace
}  // namespace sp::bench
