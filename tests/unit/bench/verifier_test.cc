// --verify: key ownership, value headers and every kind of mismatch.
#include "verifier.h"

#include <gtest/gtest.h>

#include <set>

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

TEST(VerifierTest, AcceptsTheLastWrite) {
  std::string why;
  EXPECT_EQ(Verifier::check(false, value(42, 9, 7), 42, 9, 7, &why), VerifyResult::kOk) << why;
  // A short --data-size: the header alone is still a valid value.
  EXPECT_EQ(Verifier::check(false, value(42, 9, 7, 0), 42, 9, 7, &why), VerifyResult::kOk);
}

TEST(VerifierTest, Mismatches) {
  std::string why;
  EXPECT_EQ(Verifier::check(true, {}, 42, 9, 7, &why), VerifyResult::kMismatch);
  EXPECT_NE(why.find("missing"), std::string::npos) << why;
  EXPECT_EQ(Verifier::check(false, value(42, 9, 6), 42, 9, 7, &why), VerifyResult::kMismatch);
  EXPECT_NE(why.find("stale"), std::string::npos) << why;
  EXPECT_EQ(Verifier::check(false, value(42, 9, 8), 42, 9, 7, &why), VerifyResult::kMismatch);
  EXPECT_NE(why.find("later"), std::string::npos) << why;
  EXPECT_EQ(Verifier::check(false, value(43, 9, 7), 42, 9, 7, &why), VerifyResult::kMismatch);
  EXPECT_NE(why.find("key 43"), std::string::npos) << why;
  EXPECT_EQ(Verifier::check(false, value(42, 8, 7), 42, 9, 7, &why), VerifyResult::kMismatch);
  EXPECT_NE(why.find("another run"), std::string::npos) << why;
  EXPECT_EQ(Verifier::check(false, "garbage\x01", 42, 9, 7, &why), VerifyResult::kMismatch);
  EXPECT_NE(why.find("foreign value 'garbage.'"), std::string::npos) << why;
  EXPECT_EQ(Verifier::check(false, "sbv1:42:9:", 42, 9, 7, &why), VerifyResult::kMismatch);
}

TEST(VerifierTest, KeysNeverWrittenByThisRun) {
  std::string why;
  const uint32_t never = VerifySlot::kNeverWritten;
  EXPECT_EQ(Verifier::check(true, {}, 42, 9, never, &why), VerifyResult::kOk);
  // Left over from another run or another tool: nothing to compare against.
  EXPECT_EQ(Verifier::check(false, value(42, 8, 3), 42, 9, never, &why), VerifyResult::kUnverified);
  EXPECT_EQ(Verifier::check(false, "xxxx", 42, 9, never, &why), VerifyResult::kUnverified);
  // But another key's value, or a value this run claims to have written, is wrong.
  EXPECT_EQ(Verifier::check(false, value(41, 8, 3), 42, 9, never, &why), VerifyResult::kMismatch);
  EXPECT_EQ(Verifier::check(false, value(42, 9, 3), 42, 9, never, &why), VerifyResult::kMismatch);
}

TEST(VerifierTest, UnknownAfterALostWrite) {
  std::string why;
  const uint32_t unknown = VerifySlot::kUnknown;
  EXPECT_EQ(Verifier::check(true, {}, 42, 9, unknown, &why), VerifyResult::kOk);
  EXPECT_EQ(Verifier::check(false, value(42, 9, 5), 42, 9, unknown, &why), VerifyResult::kOk);
  EXPECT_EQ(Verifier::check(false, value(40, 9, 5), 42, 9, unknown, &why), VerifyResult::kMismatch);
}

TEST(VerifySlotTest, SequenceNumbersSkipTheReservedValues) {
  VerifySlot slot;
  EXPECT_EQ(slot.takeSeq(), 1u);
  EXPECT_EQ(slot.takeSeq(), 2u);
  slot.next_seq = VerifySlot::kUnknown - 1;
  EXPECT_EQ(slot.takeSeq(), VerifySlot::kUnknown - 1);
  EXPECT_EQ(slot.takeSeq(), 1u);
}

}  // namespace
}  // namespace sp::bench
