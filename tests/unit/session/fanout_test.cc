// Merging the replies of split and fanned-out commands: MGET key order, integer sums, MSET
// all-OK, errors, script kills, LATENCY LATEST.
#include "session/fanout.h"

#include <gtest/gtest.h>

namespace sp::session {
namespace {

PendingRequest splitRequest(resp::MergeRule rule, std::vector<std::string> replies) {
  PendingRequest r;
  r.merge = rule;
  r.fragment_replies = std::move(replies);
  return r;
}

TEST(FanoutMergeTest, MgetPutsValuesBackInKeyOrder) {
  // Keys k0 k1 k2 k3: k0 and k2 went to fragment 0, k1 and k3 to fragment 1.
  PendingRequest r = splitRequest(resp::MergeRule::kArrayInKeyOrder,
                                  {"*2\r\n$2\r\nv0\r\n$-1\r\n", "*2\r\n$2\r\nv1\r\n$2\r\nv3\r\n"});
  r.key_fragment = {0, 1, 0, 1};
  r.key_position = {0, 0, 1, 1};
  mergeReplies(&r);
  EXPECT_EQ(r.reply, "*4\r\n$2\r\nv0\r\n$2\r\nv1\r\n$-1\r\n$2\r\nv3\r\n");
}

TEST(FanoutMergeTest, MgetWithShortFragmentIsAnError) {
  PendingRequest r =
      splitRequest(resp::MergeRule::kArrayInKeyOrder, {"*1\r\n$1\r\na\r\n", "*0\r\n"});
  r.key_fragment = {0, 1};
  r.key_position = {0, 0};
  mergeReplies(&r);
  EXPECT_EQ(r.reply[0], '-');
}

TEST(FanoutMergeTest, IntegersAreSummed) {
  PendingRequest r = splitRequest(resp::MergeRule::kSumIntegers, {":2\r\n", ":0\r\n", ":5\r\n"});
  mergeReplies(&r);
  EXPECT_EQ(r.reply, ":7\r\n");
}

TEST(FanoutMergeTest, MsetIsOkOnlyWhenEveryFragmentIsOk) {
  PendingRequest ok = splitRequest(resp::MergeRule::kAllOk, {"+OK\r\n", "+OK\r\n"});
  mergeReplies(&ok);
  EXPECT_EQ(ok.reply, "+OK\r\n");
  PendingRequest odd = splitRequest(resp::MergeRule::kAllOk, {"+OK\r\n", ":1\r\n"});
  mergeReplies(&odd);
  EXPECT_EQ(odd.reply[0], '-');
}

TEST(FanoutMergeTest, FirstFragmentErrorWins) {
  PendingRequest r = splitRequest(
      resp::MergeRule::kSumIntegers,
      {":1\r\n", "-ERR shard s1 (127.0.0.1:1) unavailable: x\r\n", "-WRONGTYPE other\r\n"});
  mergeReplies(&r);
  EXPECT_EQ(r.reply, "-ERR shard s1 (127.0.0.1:1) unavailable: x\r\n");
}

TEST(FanoutMergeTest, KillIsOkWhenAnyShardKilledOne) {
  // SCRIPT KILL / FUNCTION KILL: the script runs on one shard; the others are not busy.
  PendingRequest r = splitRequest(resp::MergeRule::kAnyOk,
                                  {"-NOTBUSY No scripts in execution right now.\r\n", "+OK\r\n",
                                   "-ERR shard s2 (127.0.0.1:1) unavailable: x\r\n"});
  mergeReplies(&r);
  EXPECT_EQ(r.reply, "+OK\r\n");
}

TEST(FanoutMergeTest, KillIsNotBusyWhenNoShardRanOne) {
  PendingRequest r =
      splitRequest(resp::MergeRule::kAnyOk, {"-NOTBUSY No scripts in execution right now.\r\n",
                                             "-NOTBUSY No scripts in execution right now.\r\n"});
  mergeReplies(&r);
  EXPECT_EQ(r.reply, "-NOTBUSY No scripts in execution right now.\r\n");
}

TEST(FanoutMergeTest, KillReportsAnotherErrorBeforeNotBusy) {
  // A script that wrote cannot be killed; a shard that could not be asked may be running one.
  PendingRequest r = splitRequest(
      resp::MergeRule::kAnyOk,
      {"-NOTBUSY No scripts in execution right now.\r\n",
       "-UNKILLABLE Sorry the script already executed write commands against the dataset.\r\n"});
  mergeReplies(&r);
  EXPECT_EQ(r.reply.substr(0, 11), "-UNKILLABLE");
}

std::string latencyEntry(std::string_view event, int time, int latest, int max) {
  return "*4\r\n$" + std::to_string(event.size()) + "\r\n" + std::string(event) +
         "\r\n:" + std::to_string(time) + "\r\n:" + std::to_string(latest) +
         "\r\n:" + std::to_string(max) + "\r\n";
}

TEST(FanoutMergeTest, LatencyLatestKeepsOneEntryPerEvent) {
  // Per event: the newest entry's time and latency, the largest max of any shard.
  PendingRequest r =
      splitRequest(resp::MergeRule::kLatestPerEvent,
                   {"*2\r\n" + latencyEntry("command", 100, 7, 30) + latencyEntry("fork", 90, 2, 2),
                    "*0\r\n", "*1\r\n" + latencyEntry("command", 120, 5, 9)});
  mergeReplies(&r);
  EXPECT_EQ(r.reply,
            "*2\r\n" + latencyEntry("command", 120, 5, 30) + latencyEntry("fork", 90, 2, 2));
}

TEST(FanoutMergeTest, LatencyLatestOfAnUnexpectedShapeIsAnError) {
  PendingRequest r = splitRequest(resp::MergeRule::kLatestPerEvent,
                                  {"*1\r\n*2\r\n$7\r\ncommand\r\n:1\r\n", "*0\r\n"});
  mergeReplies(&r);
  EXPECT_EQ(r.reply[0], '-');
  PendingRequest failed =
      splitRequest(resp::MergeRule::kLatestPerEvent, {"*0\r\n", "-ERR shard unavailable\r\n"});
  mergeReplies(&failed);
  EXPECT_EQ(failed.reply, "-ERR shard unavailable\r\n");
}

}  // namespace
}  // namespace sp::session
