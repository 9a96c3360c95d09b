// The CPU budget a report states: each part's CPUs, "unpinned" without pinning, and a warning for
// every pair of parts that may share a CPU.
#include "cpu_budget.h"

#include <gtest/gtest.h>

namespace sp::bench {
namespace {

CpuBudget budget(CpuList proxy, CpuList shards, CpuList client) {
  CpuBudget b;
  b.proxy = std::move(proxy);
  b.shards = std::move(shards);
  b.client = std::move(client);
  b.available = {0, 1, 2, 3};
  return b;
}

TEST(CpuBudgetTest, UnpinnedSaysSoWithoutWarnings) {
  const CpuBudget b = budget({}, {}, {});
  EXPECT_FALSE(b.pinned());
  EXPECT_EQ(b.text(), "unpinned: the proxy, the shards and the client share CPUs 0-3");
  EXPECT_TRUE(b.warnings().empty());
  EXPECT_EQ(cpuBudgetMarkdown(b),
            "- **CPU budget**: unpinned: the proxy, the shards and the client share CPUs 0-3\n");
}

TEST(CpuBudgetTest, SeparateCpusNoWarning) {
  const CpuBudget b = budget({0}, {1, 2}, {3});
  EXPECT_EQ(b.text(), "proxy: CPU 0; shards: CPUs 1,2; client: CPU 3");
  EXPECT_TRUE(b.warnings().empty());
}

TEST(CpuBudgetTest, SharedCpusAreWarnedAbout) {
  const CpuBudget b = budget({0}, {1}, {1});
  EXPECT_EQ(b.text(), "proxy: CPU 0; shards: CPU 1; client: CPU 1");
  EXPECT_EQ(b.warnings(), std::vector<std::string>{"the shards and the client share CPU 1"});
  EXPECT_NE(cpuBudgetMarkdown(b).find("- **warning**: the shards and the client share CPU 1: "),
            std::string::npos)
      << cpuBudgetMarkdown(b);

  const CpuBudget all = budget({0, 1}, {1, 2}, {0, 2});
  EXPECT_EQ(all.warnings(), (std::vector<std::string>{"the proxy and the shards share CPU 1",
                                                      "the proxy and the client share CPU 0",
                                                      "the shards and the client share CPU 2"}));
}

TEST(CpuBudgetTest, AnUnpinnedPartMayRunAnywhere) {
  const CpuBudget shards = budget({}, {2}, {3});
  EXPECT_EQ(shards.warnings()[0], "the proxy is unpinned and may run on the shards' CPU 2");
  const CpuBudget b = budget({0}, {}, {3});
  EXPECT_EQ(b.text(), "proxy: CPU 0; shards: unpinned (CPUs 0-3); client: CPU 3");
  EXPECT_EQ(b.warnings(), (std::vector<std::string>{
                              "the shards are unpinned and may run on the proxy's CPU 0",
                              "the shards are unpinned and may run on the client's CPU 3"}));
  const CpuBudget two = budget({}, {}, {3});
  EXPECT_EQ(two.warnings(), (std::vector<std::string>{
                                "the proxy and the shards are both unpinned and share CPUs 0-3",
                                "the proxy is unpinned and may run on the client's CPU 3",
                                "the shards are unpinned and may run on the client's CPU 3"}));
}

TEST(CpuBudgetTest, ServersNotStartedHereOnlyTheClientIsOurs) {
  CpuBudget b = budget({}, {}, {1});
  b.servers_local = false;
  EXPECT_EQ(b.text(), "client: CPU 1 (the servers were not started by shardbench)");
  EXPECT_TRUE(b.warnings().empty());
  b.client.clear();
  EXPECT_EQ(b.text(), "client: unpinned (the servers were not started by shardbench)");
}

TEST(CpuBudgetTest, Json) {
  JsonWriter j;
  j.beginObject();
  cpuBudgetJson(j, budget({0}, {1}, {}));
  j.endObject();
  const std::string text = j.text();
  EXPECT_NE(text.find("\"proxy\": \"0\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"shards\": \"1\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"client\": \"unpinned\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"the client is unpinned and may run on the proxy's CPU 0\""),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace sp::bench
