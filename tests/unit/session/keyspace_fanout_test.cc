// Whole-keyspace commands' merge rules and SCAN's cursor (session/keyspace_fanout.cc): the client
// cursor carries the shard in its low 14 bits and round-trips; cursors that name no shard or do
// not parse are refused; a shard's end moves to the next shard and the last shard's ends the scan;
// a SCAN reply gets the client cursor; KEYS concatenates, PUBSUB CHANNELS drops duplicates,
// RANDOMKEY takes a non-null key, LASTSAVE the minimum, SCRIPT EXISTS ands, NUMSUB sums pairs,
// SCRIPT LOAD wants one answer; a shard's error wins; shapes the rules cannot read are an error.
// End to end over two scripted shards: a full SCAN walks shard 0 then shard 1 with the cursors
// round-tripping and its options passed on, a cursor naming no shard is refused, and KEYS,
// DBSIZE, RANDOMKEY, FLUSHALL and FLUSHDB reach every shard and answer the merge.
#include "session/keyspace_fanout.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "fakes/redis_client.h"
#include "fakes/scripted_shard.h"
#include "fakes/worker_harness.h"
#include "resp/errors.h"
#include "route/topology.h"
#include "session/fanout.h"

namespace sp::session {
namespace {

PendingRequest fanned(resp::MergeRule rule, std::vector<std::string> replies) {
  PendingRequest r;
  r.merge = rule;
  r.fragment_replies = std::move(replies);
  return r;
}

std::string merged(resp::MergeRule rule, std::vector<std::string> replies) {
  PendingRequest r = fanned(rule, std::move(replies));
  mergeReplies(&r);
  return r.reply;
}

const std::string kUnexpected(resp::err::kUnexpectedFanoutReply.text);

TEST(ScanCursorTest, TheShardIsInTheLow14BitsAndItsCursorAbove) {
  uint64_t cursor = 0;
  ASSERT_TRUE(encodeScanCursor(3, 5, &cursor));
  EXPECT_EQ(cursor, (uint64_t{5} << 14) | 3);
  uint16_t shard = 0;
  uint64_t shard_cursor = 0;
  ASSERT_TRUE(decodeScanCursor(std::to_string(cursor), 4, &shard, &shard_cursor));
  EXPECT_EQ(shard, 3);
  EXPECT_EQ(shard_cursor, 5u);
}

TEST(ScanCursorTest, EncodedCursorsRoundTripUpToTheLargestShardAndCursor) {
  const uint64_t max_cursor = (uint64_t{1} << 50) - 1;
  for (const auto& [shard, shard_cursor] : std::vector<std::pair<uint16_t, uint64_t>>{
           {0, 0}, {0, 1}, {1, 0}, {16383, 0}, {16383, max_cursor}, {7, 123456789}}) {
    uint64_t cursor = 0;
    ASSERT_TRUE(encodeScanCursor(shard, shard_cursor, &cursor));
    uint16_t got_shard = 0;
    uint64_t got_cursor = 0;
    ASSERT_TRUE(decodeScanCursor(std::to_string(cursor), 16384, &got_shard, &got_cursor)) << cursor;
    EXPECT_EQ(got_shard, shard);
    EXPECT_EQ(got_cursor, shard_cursor);
  }
}

TEST(ScanCursorTest, AShardCursorOrShardTooLargeToEncodeIsRefused) {
  uint64_t cursor = 0;
  EXPECT_FALSE(encodeScanCursor(0, uint64_t{1} << 50, &cursor));
  EXPECT_FALSE(encodeScanCursor(16384, 0, &cursor));
}

TEST(ScanCursorTest, CursorZeroIsTheFirstShardsStart) {
  uint16_t shard = 9;
  uint64_t shard_cursor = 9;
  ASSERT_TRUE(decodeScanCursor("0", 3, &shard, &shard_cursor));
  EXPECT_EQ(shard, 0);
  EXPECT_EQ(shard_cursor, 0u);
}

TEST(ScanCursorTest, ACursorNamingNoShardOrNotANumberIsRefused) {
  uint16_t shard = 0;
  uint64_t shard_cursor = 0;
  EXPECT_FALSE(decodeScanCursor("3", 3, &shard, &shard_cursor));  // shard 3 of 0..2
  EXPECT_FALSE(decodeScanCursor(std::to_string((uint64_t{8} << 14) | 5), 3, &shard, &shard_cursor));
  for (const char* text : {"", "-1", "abc", "12a", " 1", "1 ", "+1", "18446744073709551616"}) {
    EXPECT_FALSE(decodeScanCursor(text, 3, &shard, &shard_cursor)) << "'" << text << "'";
  }
}

TEST(ScanCursorTest, AShardsEndMovesToTheNextShardAndTheLastShardsEndIsZero) {
  uint64_t next = 99;
  ASSERT_TRUE(nextScanCursor(1, 42, 3, &next));
  EXPECT_EQ(next, (uint64_t{42} << 14) | 1);  // the same shard, further on
  ASSERT_TRUE(nextScanCursor(1, 0, 3, &next));
  EXPECT_EQ(next, 2u);  // shard 2's start
  ASSERT_TRUE(nextScanCursor(2, 0, 3, &next));
  EXPECT_EQ(next, 0u);  // done
  EXPECT_FALSE(nextScanCursor(0, uint64_t{1} << 50, 3, &next));
}

TEST(ScanMergeTest, AShardsReplyGetsTheClientCursorAndKeepsItsKeys) {
  PendingRequest r =
      fanned(resp::MergeRule::kScanCursor, {"*2\r\n$2\r\n17\r\n*2\r\n$1\r\na\r\n$1\r\nb\r\n"});
  r.shard = 1;
  r.merge_arg = 3;
  mergeReplies(&r);
  EXPECT_EQ(r.reply, "*2\r\n$6\r\n278529\r\n*2\r\n$1\r\na\r\n$1\r\nb\r\n");  // 17 << 14 | 1
}

TEST(ScanMergeTest, ThePenultimateShardsEndPointsAtTheLastShard) {
  PendingRequest r = fanned(resp::MergeRule::kScanCursor, {"*2\r\n$1\r\n0\r\n*0\r\n"});
  r.shard = 1;
  r.merge_arg = 3;
  mergeReplies(&r);
  EXPECT_EQ(r.reply, "*2\r\n$1\r\n2\r\n*0\r\n");
  r.shard = 2;
  r.reply.clear();
  mergeReplies(&r);
  EXPECT_EQ(r.reply, "*2\r\n$1\r\n0\r\n*0\r\n");
}

TEST(ScanMergeTest, AnUnreadableOrUnencodableShardCursorIsAnError) {
  PendingRequest bad = fanned(resp::MergeRule::kScanCursor, {"*1\r\n$1\r\n0\r\n"});
  bad.merge_arg = 2;
  mergeReplies(&bad);
  EXPECT_EQ(bad.reply, kUnexpected);
  PendingRequest huge =
      fanned(resp::MergeRule::kScanCursor, {"*2\r\n$16\r\n1125899906842624\r\n*0\r\n"});
  huge.merge_arg = 2;
  mergeReplies(&huge);
  EXPECT_EQ(huge.reply, resp::err::kScanCursorTooLarge.text);
  EXPECT_EQ(huge.proxy_error, resp::err::ProxyError::kUnmergeable);
}

TEST(KeyspaceMergeTest, KeysConcatenatesEveryShardsKeysInShardOrder) {
  EXPECT_EQ(merged(resp::MergeRule::kConcatArrays,
                   {"*2\r\n$1\r\na\r\n$1\r\nb\r\n", "*0\r\n", "*1\r\n$1\r\nc\r\n"}),
            "*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n");
  EXPECT_EQ(merged(resp::MergeRule::kConcatArrays, {"*0\r\n", "*0\r\n"}), "*0\r\n");
}

TEST(KeyspaceMergeTest, AShardsErrorIsTheReplyInsteadOfAMerge) {
  EXPECT_EQ(merged(resp::MergeRule::kConcatArrays,
                   {"*1\r\n$1\r\na\r\n", "-ERR shard s1 is unavailable\r\n"}),
            "-ERR shard s1 is unavailable\r\n");
}

TEST(KeyspaceMergeTest, ANonArrayReplyToKeysIsAnError) {
  EXPECT_EQ(merged(resp::MergeRule::kConcatArrays, {"*0\r\n", ":3\r\n"}), kUnexpected);
}

TEST(KeyspaceMergeTest, PubsubChannelsListsEachChannelOnce) {
  EXPECT_EQ(merged(resp::MergeRule::kUnionArrays,
                   {"*2\r\n$1\r\nx\r\n$1\r\ny\r\n", "*2\r\n$1\r\ny\r\n$1\r\nz\r\n"}),
            "*3\r\n$1\r\nx\r\n$1\r\ny\r\n$1\r\nz\r\n");
}

TEST(KeyspaceMergeTest, RandomkeyIsAKeyOfSomeShardWhenAnyHasOne) {
  EXPECT_EQ(merged(resp::MergeRule::kRandomNonNull, {"$-1\r\n", "$3\r\nkey\r\n", "_\r\n"}),
            "$3\r\nkey\r\n");
  EXPECT_EQ(merged(resp::MergeRule::kRandomNonNull, {"$-1\r\n", "_\r\n", "$-1\r\n"}), "$-1\r\n");
}

TEST(KeyspaceMergeTest, LastsaveIsTheEarliestShardsTime) {
  EXPECT_EQ(merged(resp::MergeRule::kMinInteger, {":1700000300\r\n", ":1700000100\r\n"}),
            ":1700000100\r\n");
  EXPECT_EQ(merged(resp::MergeRule::kMinInteger, {":1\r\n", "+OK\r\n"}), kUnexpected);
}

TEST(KeyspaceMergeTest, ScriptExistsIsOneOnlyWhereEveryShardHasTheScript) {
  EXPECT_EQ(merged(resp::MergeRule::kAndIntegers,
                   {"*3\r\n:1\r\n:0\r\n:1\r\n", "*3\r\n:1\r\n:1\r\n:0\r\n"}),
            "*3\r\n:1\r\n:0\r\n:0\r\n");
  EXPECT_EQ(merged(resp::MergeRule::kAndIntegers, {"*2\r\n:1\r\n:1\r\n", "*1\r\n:1\r\n"}),
            kUnexpected);
}

TEST(KeyspaceMergeTest, NumsubSumsEachChannelsCount) {
  EXPECT_EQ(merged(resp::MergeRule::kSumPairs, {"*4\r\n$1\r\na\r\n:1\r\n$1\r\nb\r\n:2\r\n",
                                                "*4\r\n$1\r\na\r\n:3\r\n$1\r\nb\r\n:0\r\n"}),
            "*4\r\n$1\r\na\r\n:4\r\n$1\r\nb\r\n:2\r\n");
}

TEST(KeyspaceMergeTest, ScriptLoadIsTheShardsCommonAnswerOrAnError) {
  const std::string sha = "$40\r\n" + std::string(40, 'f') + "\r\n";
  EXPECT_EQ(merged(resp::MergeRule::kAllEqual, {sha, sha}), sha);
  EXPECT_EQ(merged(resp::MergeRule::kAllEqual, {sha, "$1\r\nx\r\n"}),
            resp::err::kShardsDiffer.text);
}

TEST(KeyspaceMergeTest, FlushallIsOkOnlyWhenEveryShardFlushed) {
  EXPECT_EQ(merged(resp::MergeRule::kAllOk, {"+OK\r\n", "+OK\r\n", "+OK\r\n"}), "+OK\r\n");
  EXPECT_EQ(merged(resp::MergeRule::kAllOk, {"+OK\r\n", "-LOADING Redis is loading\r\n"}),
            "-LOADING Redis is loading\r\n");
}

TEST(KeyspaceMergeTest, DbsizeSumsTheShardsCounts) {
  EXPECT_EQ(merged(resp::MergeRule::kSumIntegers, {":3\r\n", ":0\r\n", ":12\r\n"}), ":15\r\n");
}

using fakes::ScriptedShard;
using Argv = ScriptedShard::Argv;

// A shard holding `keys`, answering SCAN two keys at a time (its cursor: the index of the next
// key), KEYS, DBSIZE, RANDOMKEY (its first key) and FLUSHALL/FLUSHDB with `flush`.
ScriptedShard::Script shardHolding(std::vector<std::string> keys, std::string flush = "+OK\r\n") {
  return [keys, flush](const Argv& argv) {
    auto bulk = [](const std::string& s) { return fakes::bulk(s); };
    auto array = [&](size_t from, size_t to) {
      std::string out = "*" + std::to_string(to - from) + "\r\n";
      for (size_t i = from; i < to; ++i) {
        out += bulk(keys[i]);
      }
      return out;
    };
    if (argv[0] == "SCAN") {
      const size_t from = std::stoul(argv[1]);
      const size_t to = std::min(from + 2, keys.size());
      return ScriptedShard::reply("*2\r\n" + bulk(to == keys.size() ? "0" : std::to_string(to)) +
                                  array(from, to));
    }
    if (argv[0] == "KEYS") {
      return ScriptedShard::reply(array(0, keys.size()));
    }
    if (argv[0] == "DBSIZE") {
      return ScriptedShard::reply(":" + std::to_string(keys.size()) + "\r\n");
    }
    if (argv[0] == "RANDOMKEY") {
      return ScriptedShard::reply(keys.empty() ? "$-1\r\n" : bulk(keys[0]));
    }
    if (argv[0] == "FLUSHALL" || argv[0] == "FLUSHDB") {
      return ScriptedShard::reply(flush);
    }
    return ScriptedShard::reply("-ERR unscripted\r\n");
  };
}

class KeyspaceFanoutTest : public ::testing::Test {
 protected:
  void start(ScriptedShard::Script script0, ScriptedShard::Script script1) {
    shard0_ = std::make_unique<ScriptedShard>(std::move(script0));
    shard1_ = std::make_unique<ScriptedShard>(std::move(script1));
    harness_ = std::make_unique<fakes::WorkerHarness>(
        route::Topology::evenSplit({route::ShardAddress("s0", "127.0.0.1", shard0_->port()),
                                    route::ShardAddress("s1", "127.0.0.1", shard1_->port())}),
        fakes::noPings, fakes::WorkerHarness::Listen::kLoopback);
    client_ = std::make_unique<fakes::RedisClient>(harness_->port());
  }
  // One SCAN call: the cursor it returned and its keys.
  std::pair<std::string, std::vector<std::string>> scan(const std::vector<std::string>& argv) {
    fakes::Reply r = client_->command(argv);
    if (r == nullptr || r->type != REDIS_REPLY_ARRAY || r->elements != 2) {
      ADD_FAILURE() << "not a SCAN reply";
      return {};
    }
    std::vector<std::string> keys;
    for (size_t i = 0; i < r->element[1]->elements; ++i) {
      keys.push_back(fakes::text(*r->element[1]->element[i]));
    }
    return {fakes::text(*r->element[0]), keys};
  }
  std::string text(const std::vector<std::string>& argv) {
    fakes::Reply r = client_->command(argv);
    if (r == nullptr) {
      return "(no reply)";
    }
    if (r->type == REDIS_REPLY_INTEGER) {
      return std::to_string(r->integer);
    }
    if (r->type == REDIS_REPLY_NIL) {
      return "(nil)";
    }
    if (r->type == REDIS_REPLY_ARRAY) {
      std::string out;
      for (size_t i = 0; i < r->elements; ++i) {
        out += (i == 0 ? "" : " ") + fakes::text(*r->element[i]);
      }
      return "[" + out + "]";
    }
    return fakes::text(*r);
  }

  std::unique_ptr<ScriptedShard> shard0_;
  std::unique_ptr<ScriptedShard> shard1_;
  std::unique_ptr<fakes::WorkerHarness> harness_;
  std::unique_ptr<fakes::RedisClient> client_;
};

TEST_F(KeyspaceFanoutTest, AFullScanVisitsShardZeroThenShardOneAndEndsAtZero) {
  start(shardHolding({"a1", "a2", "a3"}), shardHolding({"b1"}));
  using Step = std::pair<std::string, std::vector<std::string>>;
  EXPECT_EQ(scan({"SCAN", "0"}), (Step{"32768", {"a1", "a2"}}));  // shard 0, its cursor 2
  EXPECT_EQ(scan({"SCAN", "32768"}), (Step{"1", {"a3"}}));        // shard 0 done: shard 1
  EXPECT_EQ(scan({"SCAN", "1"}), (Step{"0", {"b1"}}));
  EXPECT_EQ(shard0_->commands(), (std::vector<Argv>{{"SCAN", "0"}, {"SCAN", "2"}}));
  EXPECT_EQ(shard1_->commands(), (std::vector<Argv>{{"SCAN", "0"}}));
}

TEST_F(KeyspaceFanoutTest, ScanOptionsArePassedToTheShardAsTheyAre) {
  start(shardHolding({"a1"}), shardHolding({"b1", "b2", "b3"}));
  scan({"SCAN", "1", "MATCH", "b*", "COUNT", "10", "TYPE", "string"});
  EXPECT_EQ(shard1_->commands(),
            (std::vector<Argv>{{"SCAN", "0", "MATCH", "b*", "COUNT", "10", "TYPE", "string"}}));
  EXPECT_TRUE(shard0_->commands().empty());
}

TEST_F(KeyspaceFanoutTest, ACursorNamingNoShardIsAnInvalidCursor) {
  start(shardHolding({"a1"}), shardHolding({"b1"}));
  EXPECT_EQ(text({"SCAN", "2"}), "ERR invalid cursor");
  EXPECT_EQ(text({"SCAN", "nope"}), "ERR invalid cursor");
  EXPECT_TRUE(shard0_->commands().empty());
  EXPECT_TRUE(shard1_->commands().empty());
}

TEST_F(KeyspaceFanoutTest, KeysAndDbsizeCoverEveryShard) {
  start(shardHolding({"a1", "a2"}), shardHolding({"b1"}));
  EXPECT_EQ(text({"KEYS", "*"}), "[a1 a2 b1]");
  EXPECT_EQ(text({"DBSIZE"}), "3");
  EXPECT_EQ(shard0_->commands(), (std::vector<Argv>{{"KEYS", "*"}, {"DBSIZE"}}));
  EXPECT_EQ(shard1_->commands(), (std::vector<Argv>{{"KEYS", "*"}, {"DBSIZE"}}));
}

TEST_F(KeyspaceFanoutTest, RandomkeyIsNilOnlyWhenEveryShardIsEmpty) {
  start(shardHolding({}), shardHolding({"b1"}));
  EXPECT_EQ(text({"RANDOMKEY"}), "b1");
}

TEST_F(KeyspaceFanoutTest, RandomkeyOfAnEmptyKeyspaceIsNil) {
  start(shardHolding({}), shardHolding({}));
  EXPECT_EQ(text({"RANDOMKEY"}), "(nil)");
}

TEST_F(KeyspaceFanoutTest, FlushallAndFlushdbReachEveryShardAndAnswerOk) {
  start(shardHolding({"a1"}), shardHolding({"b1"}));
  EXPECT_EQ(text({"FLUSHALL"}), "OK");
  EXPECT_EQ(text({"FLUSHDB", "ASYNC"}), "OK");
  EXPECT_EQ(shard0_->commands(), (std::vector<Argv>{{"FLUSHALL"}, {"FLUSHDB", "ASYNC"}}));
  EXPECT_EQ(shard1_->commands(), (std::vector<Argv>{{"FLUSHALL"}, {"FLUSHDB", "ASYNC"}}));
}

TEST_F(KeyspaceFanoutTest, AShardThatCannotFlushMakesItsErrorTheReply) {
  start(shardHolding({"a1"}), shardHolding({"b1"}, "-MISCONF no disk\r\n"));
  EXPECT_EQ(text({"FLUSHALL"}), "MISCONF no disk");
}

}  // namespace
}  // namespace sp::session
