// The text report's header: the run's description and, with --tls, how it connected.
#include "report.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

namespace sp::bench {
namespace {

std::string tableOf(const RunSummary& summary) {
  char* text = nullptr;
  size_t len = 0;
  FILE* out = open_memstream(&text, &len);
  PhaseResult phase;
  phase.name = "SET";
  RowResult row;
  row.type = "SET";
  row.stats.ops = 10;
  row.stats.latency.record(1000);
  phase.rows.push_back(row);
  printTable(out, {phase}, summary);
  std::fclose(out);
  std::string s(text, len);
  std::free(text);
  return s;
}

TEST(ReportTest, TlsLine) {
  TlsSummary tls;
  EXPECT_EQ(tlsLine(tls), "");
  tls = TlsSummary{true, true, false, "TLSv1.3", "TLS_AES_256_GCM_SHA384"};
  EXPECT_EQ(tlsLine(tls), "TLS: TLSv1.3 TLS_AES_256_GCM_SHA384, server certificate verified");
  tls.verify = false;
  tls.client_cert = true;
  EXPECT_EQ(tlsLine(tls),
            "TLS: TLSv1.3 TLS_AES_256_GCM_SHA384, server certificate not verified "
            "(--tls-skip-verify), client certificate");
  tls.protocol.clear();
  EXPECT_EQ(tlsLine(tls).rfind("TLS: no handshake completed, ", 0), 0u);
}

TEST(ReportTest, HeaderShowsTlsUnderTheDescription) {
  RunSummary summary;
  summary.description = "shardbench 0.1.0: 127.0.0.1:6379, 1 thread, 50 connections, TLS";
  summary.tls = TlsSummary{true, true, false, "TLSv1.3", "TLS_AES_256_GCM_SHA384"};
  const std::string text = tableOf(summary);
  EXPECT_EQ(text.rfind(summary.description + "\n" + tlsLine(summary.tls) + "\n\nSET: ", 0), 0u)
      << text;

  summary.tls = TlsSummary{};
  const std::string plain = tableOf(summary);
  EXPECT_EQ(plain.rfind(summary.description + "\n\nSET: ", 0), 0u) << plain;
  EXPECT_EQ(plain.find("TLS:"), std::string::npos);
}

}  // namespace
}  // namespace sp::bench
