// Multi-key commands through the proxy: MGET/MSET/DEL/EXISTS/UNLINK/TOUCH split over shards and
// merged (MGET in key order with nils, integer replies summed, MSET all-OK), and -CROSSSLOT for
// every other multi-key command whose keys are in different slots, success for one hash tag.
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <string>
#include <type_traits>
#include <vector>

#include "integration/harness.h"

namespace sp::test {
namespace {

constexpr const char* kCrossSlot = "(error) CROSSSLOT Keys in request don't hash to the same slot";

// Two keys in different slots; with `same_half` both slots lie in the first half of the slot
// space, so they are in different slots but (with 2 shards split evenly) on the same shard.
std::pair<std::string, std::string> keysInDifferentSlots(bool same_half) {
  std::string a = "ka";
  for (int i = 0;; ++i) {
    std::string b = "kb" + std::to_string(i);
    uint16_t sa = testKeySlot(a);
    uint16_t sb = testKeySlot(b);
    if (sa == sb) {
      continue;
    }
    if (!same_half || ((sa < 8192) == (sb < 8192))) {
      return {a, b};
    }
  }
}

template <typename N>
class MultiKeyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    env_ = std::make_unique<Deployment>(N::value);
    client_ = std::make_unique<Client>(env_->port());
    ASSERT_TRUE(client_->ok());
  }
  std::string cmd(const std::vector<std::string>& argv) { return client_->cmd(argv); }

  // DBSIZE of every shard, read straight from the redis-servers.
  std::vector<long> shardSizes() {
    std::vector<long> out;
    for (auto& s : env_->shards()) {
      Client direct(s->port());
      std::string r = direct.cmd({"DBSIZE"});
      out.push_back(r.rfind("(integer) ", 0) == 0 ? std::stol(r.substr(10)) : -1);
    }
    return out;
  }

  std::unique_ptr<Deployment> env_;
  std::unique_ptr<Client> client_;
};

using ShardCounts =
    ::testing::Types<std::integral_constant<int, 2>, std::integral_constant<int, 16>>;
TYPED_TEST_SUITE(MultiKeyTest, ShardCounts);

TYPED_TEST(MultiKeyTest, MsetMgetAcrossShards) {
  constexpr int kKeys = 100;
  std::vector<std::string> mset = {"MSET"};
  for (int i = 0; i < kKeys; ++i) {
    mset.push_back("mk:" + std::to_string(i));
    mset.push_back("v" + std::to_string(i));
  }
  ASSERT_EQ(this->cmd(mset), "OK");

  // The keys really landed on several shards, each key once.
  std::vector<long> sizes = this->shardSizes();
  long total = 0;
  int nonempty = 0;
  for (long s : sizes) {
    total += s;
    nonempty += s > 0;
  }
  EXPECT_EQ(total, kKeys);
  if (!this->env_->direct()) {
    EXPECT_EQ(nonempty, TypeParam::value) << "100 keys should reach every shard";
  }

  // MGET in request order, nils for missing keys, interleaved.
  std::vector<std::string> mget = {"MGET"};
  std::string expected = "[";
  for (int i = kKeys - 1; i >= 0; --i) {
    mget.push_back("mk:" + std::to_string(i));
    expected += "v" + std::to_string(i) + ", ";
    if (i % 7 == 0) {
      mget.push_back("mk:missing:" + std::to_string(i));
      expected += "(nil), ";
    }
  }
  mget.push_back("mk:5");  // a repeated key
  expected += "v5]";
  EXPECT_EQ(this->cmd(mget), expected);
  EXPECT_EQ(this->cmd({"MGET", "mk:missing"}), "[(nil)]");
  EXPECT_EQ(this->cmd({"MGET", "mk:3"}), "[v3]");

  // MSET overwrites across shards; the last value of a repeated key wins, as in Redis.
  EXPECT_EQ(this->cmd({"MSET", "mk:1", "a", "mk:2", "b", "mk:1", "c", "mk:99", "d"}), "OK");
  EXPECT_EQ(this->cmd({"MGET", "mk:1", "mk:2", "mk:99"}), "[c, b, d]");
  // Hash-tagged keys go to one shard.
  EXPECT_EQ(this->cmd({"MSET", "{user:1}:name", "ann", "{user:1}:email", "a@x"}), "OK");
  EXPECT_EQ(this->cmd({"MGET", "{user:1}:email", "{user:1}:name", "{user:1}:nope"}),
            "[a@x, ann, (nil)]");
  // Arity errors are Redis's.
  EXPECT_EQ(this->cmd({"MSET", "odd:a", "b", "odd:c"}),
            "(error) ERR wrong number of arguments for 'mset' command");
  EXPECT_EQ(this->cmd({"EXISTS", "odd:a", "odd:c"}), "(integer) 0") << "a refused MSET wrote";
  EXPECT_EQ(this->cmd({"MGET"}), "(error) ERR wrong number of arguments for 'mget' command");
}

TYPED_TEST(MultiKeyTest, DelExistsUnlinkTouchSum) {
  constexpr int kKeys = 60;
  std::vector<std::string> mset = {"MSET"};
  std::vector<std::string> exists = {"EXISTS"};
  std::vector<std::string> touch = {"TOUCH"};
  for (int i = 0; i < kKeys; ++i) {
    mset.push_back("dk:" + std::to_string(i));
    mset.push_back("x");
    exists.push_back("dk:" + std::to_string(i));
    touch.push_back("dk:" + std::to_string(i));
  }
  ASSERT_EQ(this->cmd(mset), "OK");
  exists.push_back("dk:missing");
  exists.push_back("dk:0");  // Redis counts a repeated key each time
  EXPECT_EQ(this->cmd(exists), "(integer) " + std::to_string(kKeys + 1));
  touch.push_back("dk:missing");
  EXPECT_EQ(this->cmd(touch), "(integer) " + std::to_string(kKeys));

  std::vector<std::string> del = {"DEL"};
  for (int i = 0; i < kKeys / 2; ++i) {
    del.push_back("dk:" + std::to_string(i));
  }
  del.push_back("dk:missing:a");
  del.push_back("dk:missing:b");
  EXPECT_EQ(this->cmd(del), "(integer) " + std::to_string(kKeys / 2));
  EXPECT_EQ(this->cmd(del), "(integer) 0");

  std::vector<std::string> unlink = {"UNLINK"};
  for (int i = 0; i < kKeys; ++i) {
    unlink.push_back("dk:" + std::to_string(i));
  }
  EXPECT_EQ(this->cmd(unlink), "(integer) " + std::to_string(kKeys - kKeys / 2));
  EXPECT_EQ(this->cmd(exists), "(integer) 0");
  std::vector<long> sizes = this->shardSizes();
  for (size_t i = 0; i < sizes.size(); ++i) {
    EXPECT_EQ(sizes[i], 0) << "shard " << i;
  }
  EXPECT_EQ(this->cmd({"MGET", "dk:0", "dk:59"}), "[(nil), (nil)]");
  EXPECT_EQ(this->cmd({"DEL", "dk:single"}), "(integer) 0");
}

TYPED_TEST(MultiKeyTest, CrossSlotIsRefused) {
  if (this->env_->direct()) {
    GTEST_SKIP() << "CROSSSLOT is proxy (cluster) behaviour";
  }
  auto [a, b] = keysInDifferentSlots(false);
  auto [c, d] = keysInDifferentSlots(true);
  ASSERT_EQ(this->cmd({"SET", a, "1"}), "OK");
  ASSERT_EQ(this->cmd({"SET", c, "1"}), "OK");
  ASSERT_EQ(this->cmd({"SADD", "sa", "1"}), "(integer) 1");
  ASSERT_EQ(this->cmd({"SADD", "sb", "2"}), "(integer) 1");
  ASSERT_NE(testKeySlot("sa"), testKeySlot("sb"));

  EXPECT_EQ(this->cmd({"RENAME", a, b}), kCrossSlot);
  EXPECT_EQ(this->cmd({"RENAME", c, d}), kCrossSlot) << "different slots on one shard";
  EXPECT_EQ(this->cmd({"SUNION", "sa", "sb"}), kCrossSlot);
  EXPECT_EQ(this->cmd({"SINTERSTORE", "sdst", "sa", "sb"}), kCrossSlot);
  EXPECT_EQ(this->cmd({"SMOVE", "sa", "sb", "1"}), kCrossSlot);
  EXPECT_EQ(this->cmd({"RPOPLPUSH", a, b}), kCrossSlot);
  EXPECT_EQ(this->cmd({"MSETNX", a, "1", b, "2"}), kCrossSlot);
  EXPECT_EQ(this->cmd({"ZUNIONSTORE", "zdst", "2", "sa", "sb"}), kCrossSlot);
  EXPECT_EQ(this->cmd({"EVAL", "return 1", "2", a, b}), kCrossSlot);
  // Nothing moved: the source keys are intact.
  EXPECT_EQ(this->cmd({"GET", a}), "1");
  EXPECT_EQ(this->cmd({"EXISTS", b}), "(integer) 0");
  EXPECT_EQ(this->cmd({"SCARD", "sa"}), "(integer) 1");
  // The connection is still usable.
  EXPECT_EQ(this->cmd({"PING"}), "PONG");
}

TYPED_TEST(MultiKeyTest, SameHashTagSucceeds) {
  EXPECT_EQ(this->cmd({"SET", "{t}a", "1"}), "OK");
  EXPECT_EQ(this->cmd({"RENAME", "{t}a", "{t}b"}), "OK");
  EXPECT_EQ(this->cmd({"GET", "{t}b"}), "1");
  EXPECT_EQ(this->cmd({"EXISTS", "{t}a"}), "(integer) 0");
  EXPECT_EQ(this->cmd({"RENAMENX", "{t}b", "{t}c"}), "(integer) 1");
  EXPECT_EQ(this->cmd({"SADD", "{t}s1", "x", "y"}), "(integer) 2");
  EXPECT_EQ(this->cmd({"SADD", "{t}s2", "y", "z"}), "(integer) 2");
  EXPECT_EQ(this->cmd({"SINTER", "{t}s1", "{t}s2"}), "[y]");
  EXPECT_EQ(this->cmd({"SINTERSTORE", "{t}s3", "{t}s1", "{t}s2"}), "(integer) 1");
  EXPECT_EQ(this->cmd({"MSETNX", "{t}n1", "1", "{t}n2", "2"}), "(integer) 1");
  EXPECT_EQ(
      this->cmd({"EVAL", "return redis.call('GET', KEYS[1]) .. KEYS[2]", "2", "{t}n1", "{t}n2"}),
      "1{t}n2");
  EXPECT_EQ(this->cmd({"COPY", "{t}n1", "{t}n3"}), "(integer) 1");
  EXPECT_EQ(this->cmd({"MGET", "{t}n1", "{t}n2", "{t}n3"}), "[1, 2, 1]");
}

}  // namespace
}  // namespace sp::test
