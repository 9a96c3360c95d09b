// Tests for route/key_slot.cc: CRC16-XMODEM vectors, hash tags and known Redis Cluster slots.
#include "route/key_slot.h"

#include <gtest/gtest.h>

#include <string>

namespace sp::route {
namespace {

using namespace std::string_view_literals;

TEST(KeySlotTest, Crc16CheckValue) {
  // The standard check value of CRC-16/XMODEM, also the test vector in Redis's crc16.c.
  EXPECT_EQ(crc16("123456789"), 0x31C3);
  EXPECT_EQ(crc16(""), 0);
  EXPECT_EQ(crc16("A"), 0x58E5);
  EXPECT_EQ(crc16("\0"sv), 0);
  EXPECT_EQ(crc16("\xff"sv), 0x1EF0);
}

TEST(KeySlotTest, KnownRedisSlots) {
  // Values from CLUSTER KEYSLOT on a real Redis (see key_slot_cluster_test.cc for many more).
  EXPECT_EQ(keySlot("foo"), 12182);
  EXPECT_EQ(keySlot("bar"), 5061);
  EXPECT_EQ(keySlot("hello"), 866);
  EXPECT_EQ(keySlot(""), 0);
}

TEST(KeySlotTest, HashTagSelectsTheSlot) {
  EXPECT_EQ(keySlot("{user1000}.following"), keySlot("{user1000}.followers"));
  EXPECT_EQ(keySlot("{user1000}.following"), keySlot("user1000"));
  EXPECT_EQ(keySlot("x{foo}y"), keySlot("foo"));
}

TEST(KeySlotTest, HashTagRules) {
  // An empty first tag: the whole key is hashed, even though a later tag exists.
  EXPECT_EQ(hashTag("foo{}{bar}"), "foo{}{bar}");
  EXPECT_EQ(keySlot("foo{}{bar}"), crc16("foo{}{bar}") & 16383);
  // The tag runs from the first '{' to the first '}' after it.
  EXPECT_EQ(hashTag("foo{{bar}}zap"), "{bar");
  EXPECT_EQ(keySlot("foo{{bar}}zap"), keySlot("{bar"));
  EXPECT_EQ(hashTag("foo{bar}{zap}"), "bar");
  EXPECT_EQ(keySlot("foo{bar}{zap}"), keySlot("bar"));
  // No closing brace, or a '}' only before the '{': the whole key.
  EXPECT_EQ(hashTag("foo{bar"), "foo{bar");
  EXPECT_EQ(hashTag("foo}bar{"), "foo}bar{");
  EXPECT_EQ(hashTag("}{x}"), "x");
  EXPECT_EQ(hashTag("{}"), "{}");
  EXPECT_EQ(hashTag("{a}"), "a");
  EXPECT_EQ(hashTag(""), "");
  // Binary bytes inside a tag are hashed as they are.
  const std::string_view binary = "k{\0\xff}v"sv;
  EXPECT_EQ(hashTag(binary), "\0\xff"sv);
}

TEST(KeySlotTest, SlotsAreInRange) {
  for (int i = 0; i < 100000; ++i) {
    EXPECT_LT(keySlot(std::to_string(i)), kSlotCount);
  }
}

}  // namespace
}  // namespace sp::route
