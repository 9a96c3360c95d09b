// Router decisions: single slot, CROSSSLOT, split grouping by shard, keyless commands.
#include "route/router.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "resp/command_table.h"

namespace sp::route {
namespace {

class RouterTest : public ::testing::Test {
 protected:
  RouterTest() {
    std::vector<ShardAddress> shards;
    for (int i = 0; i < 4; ++i) {
      shards.push_back({"shard" + std::to_string(i), "127.0.0.1", static_cast<uint16_t>(7000 + i)});
    }
    topology_ = Topology::evenSplit(std::move(shards));
  }

  RoutePlan plan(std::vector<std::string_view> args) {
    const resp::CommandInfo* cmd = resp::CommandTable::instance().resolve(args);
    EXPECT_NE(cmd, nullptr);
    std::vector<uint32_t> keys;
    EXPECT_TRUE(resp::extractKeys(*cmd, args, &keys));
    RoutePlan p;
    planRoute(*cmd, args, keys, *topology_, &p);
    return p;
  }

  // Two keys known to live on different shards of the 4-shard even split.
  std::pair<std::string, std::string> keysOnTwoShards() {
    std::string a = "key:0";
    for (int i = 1;; ++i) {
      std::string b = "key:" + std::to_string(i);
      if (topology_->shardOfKey(b) != topology_->shardOfKey(a)) {
        return {a, b};
      }
    }
  }

  TopologyPtr topology_;
};

TEST_F(RouterTest, SingleKeyGoesToOwningShard) {
  RoutePlan p = plan({"GET", "foo"});
  EXPECT_EQ(p.kind, RouteKind::kSingle);
  EXPECT_EQ(p.shard, topology_->shardOfSlot(12182));  // CLUSTER KEYSLOT foo
}

TEST_F(RouterTest, SameHashTagIsOneSlot) {
  RoutePlan p = plan({"RENAME", "{user1}:a", "{user1}:b"});
  EXPECT_EQ(p.kind, RouteKind::kSingle);
  EXPECT_EQ(p.shard, topology_->shardOfKey("user1"));
}

TEST_F(RouterTest, DifferentSlotsAreCrossSlotEvenOnOneShard) {
  // "a" and "b" differ in slot; whatever their shards, RENAME needs one slot.
  ASSERT_NE(keySlot("a"), keySlot("b"));
  EXPECT_EQ(plan({"RENAME", "a", "b"}).kind, RouteKind::kCrossSlot);
  EXPECT_EQ(plan({"SUNION", "a", "b"}).kind, RouteKind::kCrossSlot);
}

TEST_F(RouterTest, SplitCommandOnOneShardIsSingle) {
  RoutePlan p = plan({"MGET", "{t}1", "{t}2", "{t}3"});
  EXPECT_EQ(p.kind, RouteKind::kSingle);
}

TEST_F(RouterTest, MgetAcrossShardsIsSplitInFirstSeenOrder) {
  auto [a, b] = keysOnTwoShards();
  RoutePlan p = plan({"MGET", a, b, a});
  ASSERT_EQ(p.kind, RouteKind::kSplit);
  ASSERT_EQ(p.fragment_shard.size(), 2u);
  EXPECT_EQ(p.fragment_shard[0], topology_->shardOfKey(a));
  EXPECT_EQ(p.fragment_shard[1], topology_->shardOfKey(b));
  EXPECT_EQ(p.fragment_of, (std::vector<uint16_t>{0, 1, 0}));
}

TEST_F(RouterTest, MsetGroupsKeyValuePairs) {
  auto [a, b] = keysOnTwoShards();
  RoutePlan p = plan({"MSET", a, "1", b, "2"});
  ASSERT_EQ(p.kind, RouteKind::kSplit);
  EXPECT_EQ(p.key_shard.size(), 2u);  // one entry per key, not per argument
  EXPECT_EQ(p.fragment_of, (std::vector<uint16_t>{0, 1}));
}

TEST_F(RouterTest, DelExistsUnlinkTouchSplit) {
  auto [a, b] = keysOnTwoShards();
  for (std::string_view cmd : {"DEL", "EXISTS", "UNLINK", "TOUCH"}) {
    EXPECT_EQ(plan({cmd, a, b}).kind, RouteKind::kSplit) << cmd;
  }
}

TEST_F(RouterTest, EvalWithoutKeysHasNoKeys) {
  RoutePlan p = plan({"EVAL", "return 1", "0"});
  EXPECT_EQ(p.kind, RouteKind::kNoKeys);
}

TEST_F(RouterTest, EvalKeysMustShareASlot) {
  auto [a, b] = keysOnTwoShards();
  EXPECT_EQ(plan({"EVAL", "return 1", "2", a, b}).kind, RouteKind::kCrossSlot);
  EXPECT_EQ(plan({"EVAL", "return 1", "2", "{x}1", "{x}2"}).kind, RouteKind::kSingle);
}

}  // namespace
}  // namespace sp::route

namespace sp::route {
namespace {

TEST_F(RouterTest, ClusterModeSplitsBySlotEvenOnOneShard) {
  // Two keys of different slots on the same shard: one fragment each, since a cluster node
  // answers CROSSSLOT to a multi-key command across slots.
  std::string a = "k0";
  std::string b;
  for (int i = 1; b.empty(); ++i) {
    std::string c = "k" + std::to_string(i);
    if (topology_->shardOfKey(c) == topology_->shardOfKey(a) && keySlot(c) != keySlot(a)) {
      b = c;
    }
  }
  std::vector<std::string_view> args = {"MGET", a, b, a};
  const resp::CommandInfo* cmd = resp::CommandTable::instance().resolve(args);
  std::vector<uint32_t> keys;
  ASSERT_TRUE(resp::extractKeys(*cmd, args, &keys));
  RoutePlan by_shard;
  planRoute(*cmd, args, keys, *topology_, &by_shard, false);
  EXPECT_EQ(by_shard.kind, RouteKind::kSingle);
  RoutePlan by_slot;
  planRoute(*cmd, args, keys, *topology_, &by_slot, true);
  ASSERT_EQ(by_slot.kind, RouteKind::kSplit);
  EXPECT_EQ(by_slot.fragment_slot, (std::vector<uint16_t>{keySlot(a), keySlot(b)}));
  EXPECT_EQ(by_slot.fragment_of, (std::vector<uint16_t>{0, 1, 0}));
  EXPECT_EQ(by_slot.fragment_shard[0], by_slot.fragment_shard[1]);
}

}  // namespace
}  // namespace sp::route
