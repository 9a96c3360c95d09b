// A worker's slow log and the merge PROXY SLOWLOG reads: a ring of slowlog.max_len entries (none
// when 0) that overwrites its oldest entry, lists newest first, empties on reset, keeps its newest
// entries when resized, truncates its text fields, and merges the workers' logs by id, numbering
// the entries no reader has seen yet in the order they were recorded.
#include "net/slow_log.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace sp::net {
namespace {

SlowLogEntry entry(uint64_t id) {
  SlowLogEntry e;
  e.id = id;
  e.duration_us = id * 100;
  SlowLogEntry::copy(e.command, sizeof e.command, "GET");
  return e;
}

// One field of each entry, in order.
std::vector<uint64_t> each(const std::vector<SlowLogEntry>& entries,
                           uint64_t SlowLogEntry::*field) {
  std::vector<uint64_t> out;
  for (const SlowLogEntry& e : entries) {
    out.push_back(e.*field);
  }
  return out;
}

std::vector<uint64_t> ids(const std::vector<SlowLogEntry>& entries) {
  return each(entries, &SlowLogEntry::id);
}

std::vector<uint64_t> newestIds(const SlowLog& log, size_t limit = 100) {
  std::vector<SlowLogEntry> out;
  log.newest(limit, &out);
  return ids(out);
}

void recordIds(SlowLog& log, uint64_t first, uint64_t last) {
  for (uint64_t id = first; id <= last; ++id) {
    log.record(entry(id));
  }
}

TEST(SlowLogTest, ALogOfLengthZeroRecordsNothing) {
  SlowLog log;
  log.configure(0);
  log.record(entry(1));
  EXPECT_EQ(log.size(), 0u);
  EXPECT_EQ(newestIds(log), std::vector<uint64_t>{});
}

TEST(SlowLogTest, ListsNewestFirstUpToTheLimit) {
  SlowLog log;
  log.configure(10);
  recordIds(log, 1, 4);
  EXPECT_EQ(newestIds(log), (std::vector<uint64_t>{4, 3, 2, 1}));
  EXPECT_EQ(newestIds(log, 2), (std::vector<uint64_t>{4, 3}));
  std::vector<SlowLogEntry> out;
  log.newest(1, &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].duration_us, 400u);
  EXPECT_STREQ(out[0].command, "GET");
}

TEST(SlowLogTest, PastItsLengthTheOldestEntriesAreOverwritten) {
  SlowLog log;
  log.configure(3);
  recordIds(log, 1, 5);
  EXPECT_EQ(log.size(), 3u);
  EXPECT_EQ(newestIds(log), (std::vector<uint64_t>{5, 4, 3}));
}

TEST(SlowLogTest, ResetEmptiesTheLogWhichThenRecordsAgain) {
  SlowLog log;
  log.configure(3);
  recordIds(log, 1, 5);
  log.reset();
  EXPECT_EQ(log.size(), 0u);
  EXPECT_EQ(newestIds(log), std::vector<uint64_t>{});
  recordIds(log, 6, 7);
  EXPECT_EQ(newestIds(log), (std::vector<uint64_t>{7, 6}));
}

TEST(SlowLogTest, ShrinkingKeepsTheNewestEntriesThatFit) {
  SlowLog log;
  log.configure(4);
  recordIds(log, 1, 6);  // the ring has wrapped
  log.configure(2);
  EXPECT_EQ(newestIds(log), (std::vector<uint64_t>{6, 5}));
  log.record(entry(7));
  EXPECT_EQ(newestIds(log), (std::vector<uint64_t>{7, 6}));
}

TEST(SlowLogTest, GrowingKeepsEveryEntryInOrder) {
  SlowLog log;
  log.configure(2);
  recordIds(log, 1, 3);
  log.configure(5);
  recordIds(log, 4, 6);
  EXPECT_EQ(newestIds(log), (std::vector<uint64_t>{6, 5, 4, 3, 2}));
  log.record(entry(7));
  EXPECT_EQ(newestIds(log), (std::vector<uint64_t>{7, 6, 5, 4, 3}));
}

TEST(SlowLogTest, ConfiguringTheSameLengthKeepsTheEntries) {
  SlowLog log;
  log.configure(3);
  recordIds(log, 1, 2);
  log.configure(3);
  EXPECT_EQ(newestIds(log), (std::vector<uint64_t>{2, 1}));
}

TEST(SlowLogEntryTest, CopyTruncatesToFitAndTerminates) {
  char buf[8];
  std::memset(buf, 'z', sizeof buf);
  SlowLogEntry::copy(buf, sizeof buf, "ABCDEFGHIJ");
  EXPECT_STREQ(buf, "ABCDEFG");
  SlowLogEntry::copy(buf, sizeof buf, "");
  EXPECT_STREQ(buf, "");
  SlowLogEntry::copy(buf, sizeof buf, "1234567");
  EXPECT_STREQ(buf, "1234567");
}

// An entry as a worker records it: no id yet, its recording time in ns.
SlowLogEntry recorded(uint64_t ns) {
  SlowLogEntry e;
  e.recorded_ns = ns;
  e.duration_us = ns;  // names the entry in the assertions
  return e;
}

std::vector<uint64_t> durations(const std::vector<SlowLogEntry>& entries) {
  return each(entries, &SlowLogEntry::duration_us);
}

class SlowLogMergeTest : public ::testing::Test {
 protected:
  SlowLogIds ids_;
};

TEST_F(SlowLogMergeTest, NewEntriesAreNumberedInTheOrderTheyWereRecordedAcrossWorkers) {
  SlowLog a;
  SlowLog b;
  a.configure(5);
  b.configure(5);
  for (uint64_t ns : {10, 40, 50}) {
    a.record(recorded(ns));
  }
  for (uint64_t ns : {20, 30, 60}) {
    b.record(recorded(ns));
  }
  const auto merged = mergeNewest({&a, &b}, 100, &ids_);
  EXPECT_EQ(durations(merged), (std::vector<uint64_t>{60, 50, 40, 30, 20, 10}));
  EXPECT_EQ(ids(merged), (std::vector<uint64_t>{6, 5, 4, 3, 2, 1}));
  // Read again: the same ids, nothing renumbered.
  EXPECT_EQ(ids(mergeNewest({&a, &b}, 2, &ids_)), (std::vector<uint64_t>{6, 5}));
}

TEST_F(SlowLogMergeTest, EntriesRecordedAfterAReadGetIdsAboveEveryIdGivenBefore) {
  SlowLog a;
  SlowLog b;
  a.configure(5);
  b.configure(5);
  a.record(recorded(100));
  EXPECT_EQ(ids(mergeNewest({&a, &b}, 100, &ids_)), (std::vector<uint64_t>{1}));
  // b's entry was recorded before a's but reached its log after the read (a slow worker): it is
  // still numbered after every id a poller may have seen, so "newer than id 1" finds it.
  b.record(recorded(90));
  a.record(recorded(110));
  const auto merged = mergeNewest({&a, &b}, 100, &ids_);
  EXPECT_EQ(durations(merged), (std::vector<uint64_t>{110, 90, 100}));
  EXPECT_EQ(ids(merged), (std::vector<uint64_t>{3, 2, 1}));
}

TEST_F(SlowLogMergeTest, EntriesOverwrittenBeforeAnyReadTakeNoIds) {
  SlowLog a;
  a.configure(2);
  for (uint64_t ns : {1, 2, 3, 4}) {
    a.record(recorded(ns));
  }
  const auto merged = mergeNewest({&a}, 100, &ids_);
  EXPECT_EQ(durations(merged), (std::vector<uint64_t>{4, 3}));
  EXPECT_EQ(ids(merged), (std::vector<uint64_t>{2, 1}));
  a.reset();  // as redis-server's SLOWLOG RESET, ids go on from where they were
  a.record(recorded(5));
  EXPECT_EQ(ids(mergeNewest({&a}, 100, &ids_)), (std::vector<uint64_t>{3}));
}

TEST_F(SlowLogMergeTest, MergesTheWorkersLogsByIdNewestFirst) {
  SlowLog a;
  SlowLog b;
  a.configure(5);
  b.configure(5);
  for (uint64_t id : {1, 4, 5}) {
    a.record(entry(id));
  }
  for (uint64_t id : {2, 3, 6}) {
    b.record(entry(id));
  }
  EXPECT_EQ(ids(mergeNewest({&a, &b}, 100, &ids_)), (std::vector<uint64_t>{6, 5, 4, 3, 2, 1}));
  EXPECT_EQ(ids(mergeNewest({&a, &b}, 3, &ids_)), (std::vector<uint64_t>{6, 5, 4}));
}

TEST_F(SlowLogMergeTest, TheNewestOverallAreKeptWhenOneWorkerHoldsThemAll) {
  SlowLog a;
  SlowLog b;
  a.configure(4);
  b.configure(4);
  recordIds(a, 1, 3);
  recordIds(b, 10, 13);
  EXPECT_EQ(ids(mergeNewest({&a, &b}, 4, &ids_)), (std::vector<uint64_t>{13, 12, 11, 10}));
  EXPECT_EQ(ids(mergeNewest({&a, &b}, 0, &ids_)), std::vector<uint64_t>{});
}

}  // namespace
}  // namespace sp::net
