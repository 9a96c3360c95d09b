// JSON reader, result files round-trip exactly, and merging two runs doubles the counts.
#include "result_json.h"

#include <gtest/gtest.h>

#include "json.h"
#include "merge_command.h"
#include "rng.h"

namespace sp::bench {
namespace {

TEST(JsonValueTest, ParsesDocuments) {
  JsonValue v;
  std::string error;
  ASSERT_TRUE(JsonValue::parse(
      R"({"a": [1, 2.5, -3e2, true, false, null], "s": "x\"\\\n\u00e9", "big": 18446744073709551615,
          "o": {}})",
      &v, &error))
      << error;
  EXPECT_EQ(v["a"].size(), 6u);
  EXPECT_EQ(v["a"][0].asU64(), 1u);
  EXPECT_DOUBLE_EQ(v["a"][1].asDouble(), 2.5);
  EXPECT_DOUBLE_EQ(v["a"][2].asDouble(), -300);
  EXPECT_TRUE(v["a"][3].asBool());
  EXPECT_EQ(v["s"].asString(), "x\"\\\n\xc3\xa9");
  EXPECT_EQ(v["big"].asU64(), UINT64_MAX);  // exact: numbers keep their text
  EXPECT_TRUE(v["o"].isObject());
  EXPECT_EQ(v["missing"]["deeper"].asU64(7), 7u);
}

TEST(JsonValueTest, RejectsMalformedInput) {
  JsonValue v;
  std::string error;
  for (const char* text :
       {"", "{", "[1,]", "{\"a\" 1}", "\"open", "tru", "{} x", "[-]", "{\"a\":\"\x01\"}"}) {
    EXPECT_FALSE(JsonValue::parse(text, &v, &error)) << text;
  }
  std::string deep(100, '[');
  EXPECT_FALSE(JsonValue::parse(deep, &v, &error));
}

TEST(JsonValueTest, WritesStrings) {
  std::string out;
  appendJsonString(out, "a\"b\\c\nd\x01");
  EXPECT_EQ(out, "\"a\\\"b\\\\c\\nd\\u0001\"");
}

RunRecord sampleRun(uint64_t seed) {
  RunRecord run;
  run.command_line = "-t set,get -n 1000";
  run.target = "127.0.0.1:6379";
  run.summary.description = "test run";
  run.summary.connections = 50;
  run.summary.verify = true;
  run.summary.verify_mismatches = 1;
  run.summary.verify_unverified = 4;
  run.summary.verify_lost = 2;
  run.summary.verify_messages = {"GET of key number 3: stale"};
  Rng rng(seed);
  for (const char* name : {"SET", "GET"}) {
    PhaseResult p;
    p.name = name;
    p.duration_s = 1.5;
    RowResult r;
    r.type = name;
    r.has_hits = std::string(name) == "GET";
    for (int i = 0; i < 1000; ++i) {
      r.stats.latency.record(10000 + rng.below(3000000));
    }
    r.stats.ops = 1000;
    r.stats.hits = r.has_hits ? 900 : 0;
    r.stats.misses = r.has_hits ? 100 : 0;
    r.stats.bytes_tx = 123456;
    r.stats.bytes_rx = 5000;
    r.stats.errors.add("WRONGTYPE", 3, "WRONGTYPE Operation against a key");
    r.computeRates(p.duration_s);
    p.rows.push_back(r);
    run.phases.push_back(p);
  }
  return run;
}

TEST(ResultJsonTest, RoundTripsExactly) {
  const RunRecord run = sampleRun(1);
  const std::string text = toJson(run);
  RunRecord back;
  std::string error;
  ASSERT_TRUE(fromJson(text, &back, &error)) << error;
  EXPECT_EQ(back.command_line, run.command_line);
  EXPECT_EQ(back.summary.connections, 50u);
  EXPECT_EQ(back.summary.verify_mismatches, 1u);
  EXPECT_EQ(back.summary.verify_unverified, 4u);
  EXPECT_EQ(back.summary.verify_lost, 2u);
  EXPECT_EQ(back.summary.verify_messages, run.summary.verify_messages);
  ASSERT_EQ(back.phases.size(), 2u);
  for (size_t p = 0; p < 2; ++p) {
    const RowResult& a = run.phases[p].rows[0];
    const RowResult& b = back.phases[p].rows[0];
    EXPECT_EQ(b.type, a.type);
    EXPECT_EQ(b.has_hits, a.has_hits);
    EXPECT_EQ(b.stats.ops, a.stats.ops);
    EXPECT_EQ(b.stats.hits, a.stats.hits);
    EXPECT_EQ(b.stats.bytes_tx, a.stats.bytes_tx);
    EXPECT_EQ(b.stats.errors.count("WRONGTYPE"), 3u);
    EXPECT_EQ(b.stats.errors.entries()[0].example, "WRONGTYPE Operation against a key");
    EXPECT_EQ(b.stats.latency.buckets(), a.stats.latency.buckets());
    EXPECT_EQ(b.stats.latency.min(), a.stats.latency.min());
    EXPECT_EQ(b.stats.latency.max(), a.stats.latency.max());
    EXPECT_EQ(b.stats.latency.sum(), a.stats.latency.sum());
    EXPECT_EQ(b.stats.latency.percentile(99.9), a.stats.latency.percentile(99.9));
    EXPECT_NEAR(b.ops_per_sec, a.ops_per_sec, 0.01);
    EXPECT_NEAR(back.phases[p].duration_s, 1.5, 1e-6);
  }
}

TEST(ResultJsonTest, RecordsTls) {
  RunRecord run = sampleRun(1);
  EXPECT_NE(toJson(run).find("\"tls\": {\"enabled\": false"), std::string::npos);
  run.summary.tls = TlsSummary{true, true, true, "TLSv1.3", "TLS_AES_256_GCM_SHA384"};
  const std::string text = toJson(run);
  EXPECT_NE(text.find("\"tls\": {\"enabled\": true, \"verify\": true, \"client_cert\": true, "
                      "\"protocol\": \"TLSv1.3\", \"cipher\": \"TLS_AES_256_GCM_SHA384\"}"),
            std::string::npos)
      << text;
  RunRecord back;
  std::string error;
  ASSERT_TRUE(fromJson(text, &back, &error)) << error;
  EXPECT_TRUE(back.summary.tls.enabled);
  EXPECT_TRUE(back.summary.tls.verify);
  EXPECT_TRUE(back.summary.tls.client_cert);
  EXPECT_EQ(back.summary.tls.protocol, "TLSv1.3");
  EXPECT_EQ(back.summary.tls.cipher, "TLS_AES_256_GCM_SHA384");
}

TEST(ResultJsonTest, FilesWithoutTlsReadAsPlainTcp) {
  std::string text = toJson(sampleRun(1));
  const size_t at = text.find("\"tls\": {");
  ASSERT_NE(at, std::string::npos);
  text.erase(at, text.find("},", at) + 2 - at);  // a file written before the field existed
  RunRecord back;
  std::string error;
  ASSERT_TRUE(fromJson(text, &back, &error)) << error;
  EXPECT_FALSE(back.summary.tls.enabled);
  EXPECT_TRUE(back.summary.tls.protocol.empty());
}

TEST(MergeTest, KeepsTheTlsSettings) {
  RunRecord merged;
  RunRecord plain = sampleRun(1);
  RunRecord tls = sampleRun(2);
  tls.summary.tls = TlsSummary{true, false, false, "TLSv1.2", "ECDHE-RSA-AES256-GCM-SHA384"};
  mergeRuns(&merged, plain);
  EXPECT_FALSE(merged.summary.tls.enabled);
  mergeRuns(&merged, tls);
  EXPECT_TRUE(merged.summary.tls.enabled);
  EXPECT_FALSE(merged.summary.tls.verify);
  EXPECT_EQ(merged.summary.tls.protocol, "TLSv1.2");
}

TEST(ResultJsonTest, RejectsOtherFiles) {
  RunRecord run;
  std::string error;
  EXPECT_FALSE(fromJson("{\"tool\": \"memtier\"}", &run, &error));
  EXPECT_FALSE(fromJson("not json", &run, &error));
  std::string text = toJson(sampleRun(1));
  const size_t at = text.find("\"sub_bucket_bits\": 7");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 20, "\"sub_bucket_bits\": 5");
  EXPECT_FALSE(fromJson(text, &run, &error));
  EXPECT_NE(error.find("bucket layout"), std::string::npos);
}

TEST(MergeTest, TwoRunsDoubleTheCountsAndMergeHistograms) {
  const RunRecord a = sampleRun(1);
  const RunRecord b = sampleRun(2);
  RunRecord merged;
  mergeRuns(&merged, a);
  mergeRuns(&merged, b);
  ASSERT_EQ(merged.phases.size(), 2u);
  for (size_t p = 0; p < 2; ++p) {
    const RowResult& r = merged.phases[p].rows[0];
    EXPECT_EQ(r.stats.ops, 2000u);
    EXPECT_EQ(r.stats.latency.count(), 2000u);
    EXPECT_EQ(r.stats.bytes_tx, 2 * 123456u);
    EXPECT_EQ(r.stats.errors.count("WRONGTYPE"), 6u);
    EXPECT_NEAR(r.ops_per_sec, a.phases[p].rows[0].ops_per_sec * 2, 0.01);
    LatencyHistogram both = a.phases[p].rows[0].stats.latency;
    both.merge(b.phases[p].rows[0].stats.latency);
    EXPECT_EQ(r.stats.latency.percentile(99), both.percentile(99));
    EXPECT_DOUBLE_EQ(merged.phases[p].duration_s, 1.5);
  }
  EXPECT_EQ(merged.summary.connections, 100u);
  EXPECT_EQ(merged.summary.verify_mismatches, 2u);
  EXPECT_EQ(merged.summary.verify_lost, 4u);
}

TEST(MergeTest, PhasesAndRowsMissingFromOneRunAreKept) {
  RunRecord a = sampleRun(1);
  RunRecord b = sampleRun(2);
  b.phases.pop_back();  // no GET phase
  b.phases[0].rows[0].type = "SET#2";
  RunRecord merged;
  mergeRuns(&merged, a);
  mergeRuns(&merged, b);
  ASSERT_EQ(merged.phases.size(), 2u);
  EXPECT_EQ(merged.phases[0].rows.size(), 2u);
  EXPECT_EQ(merged.phases[1].rows[0].stats.ops, 1000u);
}

}  // namespace
}  // namespace sp::bench
