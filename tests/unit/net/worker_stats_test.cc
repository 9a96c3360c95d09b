// The per-worker statistics tables behind INFO errorstats, commandstats and the per-shard metrics:
// ErrorCodes takes the code from RESP2 "-CODE msg" and RESP3 "!len\r\nCODE msg" replies, keeps
// codes in order of first appearance, tracks at most 128 of them and counts every error in
// total(); ProtocolErrors names every reason; ShardStatsTable keeps a shard's counters by name
// across rebinds; CommandStatsTable has one entry per command and subcommand; commandClass maps
// commands to their metric class.
#include "net/worker_stats.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "resp/command_table.h"

namespace sp::net {
namespace {

using Codes = std::vector<std::pair<std::string, uint64_t>>;

Codes codesOf(const ErrorCodes& errors) {
  Codes out;
  errors.forEach([&](std::string_view code, uint64_t n) { out.emplace_back(code, n); });
  return out;
}

const resp::CommandInfo* command(std::string_view name) {
  return resp::CommandTable::instance().find(name);
}

TEST(ErrorCodesTest, TheCodeOfAResp2ErrorIsItsFirstWord) {
  ErrorCodes errors;
  errors.count("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n");
  EXPECT_EQ(codesOf(errors), (Codes{{"WRONGTYPE", 1}}));
  EXPECT_EQ(errors.total(), 1u);
}

TEST(ErrorCodesTest, TheCodeOfAResp3BlobErrorIsTheFirstWordOfItsPayload) {
  ErrorCodes errors;
  errors.count("!23\r\nSYNTAX invalid syntax\r\n");
  EXPECT_EQ(codesOf(errors), (Codes{{"SYNTAX", 1}}));
}

TEST(ErrorCodesTest, AnErrorWithoutAMessageIsItsWholeText) {
  ErrorCodes errors;
  errors.count("-NOSCRIPT\r\n");
  errors.count("!8\r\nNOTBUSY\r\n");
  EXPECT_EQ(codesOf(errors), (Codes{{"NOSCRIPT", 1}, {"NOTBUSY", 1}}));
}

TEST(ErrorCodesTest, CodesAreListedInOrderOfFirstAppearanceWithTheirCounts) {
  ErrorCodes errors;
  errors.count("-MOVED 3999 127.0.0.1:6381\r\n");
  errors.count("-ERR syntax error\r\n");
  errors.count("-MOVED 12 127.0.0.1:6380\r\n");
  errors.count("!9\r\nERR oops\r\n");
  EXPECT_EQ(codesOf(errors), (Codes{{"MOVED", 2}, {"ERR", 2}}));
  EXPECT_EQ(errors.total(), 4u);
}

TEST(ErrorCodesTest, CodesAreCaseSensitive) {
  ErrorCodes errors;
  errors.count("-ERR a\r\n");
  errors.count("-Err b\r\n");
  EXPECT_EQ(codesOf(errors), (Codes{{"ERR", 1}, {"Err", 1}}));
}

TEST(ErrorCodesTest, AnEmptyOrOverlongCodeCountsInTheTotalOnly) {
  ErrorCodes errors;
  errors.count("- starts with a space\r\n");
  errors.count("-" + std::string(ErrorCodes::kMaxCodeLen + 1, 'X') + " too long\r\n");
  errors.count("+OK\r\n");  // not an error reply at all
  EXPECT_EQ(codesOf(errors), Codes{});
  EXPECT_EQ(errors.total(), 3u);
}

TEST(ErrorCodesTest, ACodeOfTheLongestLengthIsTracked) {
  ErrorCodes errors;
  const std::string code(ErrorCodes::kMaxCodeLen, 'Y');
  errors.count("-" + code + " msg\r\n");
  EXPECT_EQ(codesOf(errors), (Codes{{code, 1}}));
}

TEST(ErrorCodesTest, PastTheCapNewCodesCountInTheTotalOnlyWhileKnownCodesStillCount) {
  ErrorCodes errors;
  for (size_t i = 0; i < ErrorCodes::kMaxCodes; ++i) {
    errors.count("-E" + std::to_string(i) + " m\r\n");
  }
  errors.count("-NEWCODE m\r\n");
  errors.count("-E0 again\r\n");
  const Codes codes = codesOf(errors);
  ASSERT_EQ(codes.size(), ErrorCodes::kMaxCodes);
  EXPECT_EQ(codes.front(), (std::pair<std::string, uint64_t>{"E0", 2}));
  EXPECT_EQ(codes.back(), (std::pair<std::string, uint64_t>{"E127", 1}));
  EXPECT_EQ(errors.total(), ErrorCodes::kMaxCodes + 2);
}

TEST(ProtocolErrorsTest, EveryReasonHasItsMetricLabel) {
  using resp::ParseError;
  const std::vector<std::pair<ParseError, std::string_view>> expected = {
      {ParseError::kNone, "unexpected_reply"},
      {ParseError::kBadType, "bad_type"},
      {ParseError::kBadArrayLen, "bad_array_len"},
      {ParseError::kArrayTooLong, "array_too_long"},
      {ParseError::kBadBulkLen, "bad_bulk_len"},
      {ParseError::kBulkTooLong, "bulk_too_long"},
      {ParseError::kExpectedBulk, "expected_bulk"},
      {ParseError::kBadCrlf, "bad_crlf"},
      {ParseError::kInlineTooLong, "inline_too_long"},
      {ParseError::kUnbalancedQuotes, "unbalanced_quotes"},
      {ParseError::kBadInteger, "bad_integer"},
      {ParseError::kTooDeep, "too_deep"},
  };
  ASSERT_EQ(expected.size(), kParseErrors);
  for (const auto& [reason, name] : expected) {
    EXPECT_EQ(ProtocolErrors::reasonName(reason), name);
  }
}

TEST(ProtocolErrorsTest, CountsByReasonAndInTotal) {
  ProtocolErrors errors;
  errors.add(resp::ParseError::kBadBulkLen);
  errors.add(resp::ParseError::kBadBulkLen);
  errors.add();  // a reply without a request
  EXPECT_EQ(errors.get(resp::ParseError::kBadBulkLen), 2u);
  EXPECT_EQ(errors.get(resp::ParseError::kNone), 1u);
  EXPECT_EQ(errors.get(resp::ParseError::kTooDeep), 0u);
  EXPECT_EQ(errors.get(), 3u);
}

TEST(ShardStatsTableTest, ARebindThatReordersShardsKeepsEachShardsCounters) {
  ShardStatsTable table;
  table.bind({"a", "b"});
  table[0].errors.add(3);
  table[1].errors.add(5);
  table.bind({"b", "a"});
  ASSERT_EQ(table.size(), 2u);
  EXPECT_EQ(table[0].errors.get(), 5u);
  EXPECT_EQ(table[1].errors.get(), 3u);
}

TEST(ShardStatsTableTest, AShardDroppedAndBoundAgainGetsItsCountersAndAddressBack) {
  ShardStatsTable table;
  table.bind({"a", "b"});
  table[1].errors.add(7);
  const ShardStats* b = &table[1];
  table.bind({"a"});
  EXPECT_EQ(table.size(), 1u);
  table.bind({"c", "b"});
  EXPECT_EQ(&table[1], b);
  EXPECT_EQ(table[1].errors.get(), 7u);
  EXPECT_EQ(table[0].errors.get(), 0u);  // a new name starts at zero
}

TEST(ShardStatsTableTest, ForEachListsTheCurrentBindingInOrder) {
  ShardStatsTable table;
  table.bind({"x", "y", "z"});
  table[2].ejections.add();
  table.bind({"z", "x"});
  std::vector<std::pair<std::string, uint64_t>> seen;
  table.forEach([&](const std::string& name, const ShardStats& stats) {
    seen.emplace_back(name, stats.ejections.get());
  });
  EXPECT_EQ(seen, (std::vector<std::pair<std::string, uint64_t>>{{"z", 1}, {"x", 0}}));
}

TEST(WorkerStatsTest, BindsThePrimaryAndReplicaTablesToTheShards) {
  WorkerStats stats({"s0", "s1", "s2"});
  EXPECT_EQ(stats.shards.size(), 3u);
  EXPECT_EQ(stats.replica_shards.size(), 3u);
  EXPECT_NE(&stats.shards[0], &stats.replica_shards[0]);
}

TEST(CommandStatsTableTest, HasOneDistinctEntryPerCommandAndSubcommand) {
  CommandStatsTable table;
  size_t expected = 0;
  std::set<const CommandStats*> entries;
  for (const resp::CommandInfo& c : resp::CommandTable::instance().commands()) {
    ++expected;
    entries.insert(table.find(&c));
    for (const resp::CommandInfo& sub : c.subcommands) {
      ++expected;
      entries.insert(table.find(&sub));
    }
  }
  EXPECT_EQ(table.size(), expected);
  EXPECT_EQ(entries.size(), expected);
  EXPECT_EQ(entries.count(nullptr), 0u);
}

TEST(CommandStatsTableTest, ACommandOutsideTheTableHasNoEntry) {
  CommandStatsTable table;
  const resp::CommandInfo stranger{};
  EXPECT_EQ(table.find(nullptr), nullptr);
  EXPECT_EQ(table.find(&stranger), nullptr);
  table.observe(&stranger, 10, 0, true);  // ignored, not a crash
}

TEST(CommandStatsTableTest, ObserveCountsCallsMicrosBucketAndFailures) {
  if (!metrics::kMetricsEnabled) {
    GTEST_SKIP() << "built with SHARDPROXY_METRICS=0";
  }
  CommandStatsTable table;
  const resp::CommandInfo* get = command("get");
  ASSERT_NE(get, nullptr);
  table.observe(get, 120, 3, false);
  table.observe(get, 30, 3, true);
  table.observe(get, 5, 0, false);
  const CommandStats* s = table.find(get);
  EXPECT_EQ(s->calls.get(), 3u);
  EXPECT_EQ(s->usec.get(), 155u);
  EXPECT_EQ(s->failed.get(), 1u);
  EXPECT_EQ(s->buckets[3].get(), 2u);
  EXPECT_EQ(s->buckets[0].get(), 1u);
  EXPECT_EQ(table.find(command("set"))->calls.get(), 0u);
}

TEST(CommandStatsTableTest, ForEachWalksTheTableInOrderWithSubcommandsAfterTheirContainer) {
  CommandStatsTable table;
  std::vector<std::string_view> names;
  table.forEach([&](const resp::CommandInfo& c, const CommandStats&) { names.push_back(c.name); });
  ASSERT_EQ(names.size(), table.size());
  EXPECT_EQ(names.front(), resp::CommandTable::instance().commands().front().name);
  const auto client = std::find(names.begin(), names.end(), "client");
  ASSERT_NE(client, names.end());
  ASSERT_NE(client + 1, names.end());
  EXPECT_TRUE((client + 1)->starts_with("client|"));
}

TEST(CommandClassTest, CommandsMapToTheirMetricClass) {
  EXPECT_EQ(commandClass(nullptr), CommandClass::kOther);
  EXPECT_EQ(commandClass(command("get")), CommandClass::kRead);
  EXPECT_EQ(commandClass(command("set")), CommandClass::kWrite);
  EXPECT_EQ(commandClass(command("mget")), CommandClass::kMultiKey);
  EXPECT_EQ(commandClass(command("ping")), CommandClass::kLocal);
  EXPECT_EQ(commandClass(command("proxy")), CommandClass::kAdmin);
  EXPECT_EQ(commandClass(command("eval")), CommandClass::kOther);
}

}  // namespace
}  // namespace sp::net
