// Report: the final table in memtier_benchmark's layout (plus p90, p99.99 and max), the
// redis-benchmark style -q lines and --csv rows, the error and verify summaries, and the
// once-a-second progress line.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "command_stats.h"

namespace sp::bench {

// --tls: how the run connected. protocol and cipher are what the first handshake negotiated.
struct TlsSummary {
  bool enabled = false;
  bool verify = false;       // the server's certificate was verified (not --tls-skip-verify)
  bool client_cert = false;  // a client certificate was offered (--cert)
  std::string protocol;      // "TLSv1.3"; "" when no handshake completed
  std::string cipher;        // "TLS_AES_256_GCM_SHA384"
};

// "TLS: TLSv1.3 TLS_AES_256_GCM_SHA384, server certificate verified, client certificate" (the
// line under the report's description); "" without TLS.
std::string tlsLine(const TlsSummary& tls);

struct RunSummary {
  std::string description;  // "1 thread, 50 connections, pipeline 1 against 127.0.0.1:6379"
  uint64_t connections = 0;
  uint64_t reconnects = 0;
  uint64_t closed_by_server = 0;
  TlsSummary tls;
  bool verify = false;
  uint64_t verify_mismatches = 0;
  uint64_t verify_unverified = 0;  // reads with no single expected value
  uint64_t verify_lost = 0;        // --verify-allow-loss: acknowledged writes read back as nil
  std::vector<std::string> verify_messages;
};

// Milliseconds with the given precision from nanoseconds.
double toMs(double ns);

void printTable(FILE* out, const std::vector<PhaseResult>& phases, const RunSummary& summary);
void printQuiet(FILE* out, const PhaseResult& phase);
void printCsvHeader(FILE* out);
void printCsv(FILE* out, const PhaseResult& phase);
// Errors by kind and the verify result; nothing when there is nothing to say.
void printProblems(FILE* out, const std::vector<PhaseResult>& phases, const RunSummary& summary);

// "[SET] 3s  45% done  123456 ops  98765 ops/s  avg 0.401 ms" ("12s left" under --test-time,
// when time_left_s >= 0).
std::string progressLine(const std::string& phase, double elapsed_s, uint64_t ops,
                         double recent_ops_per_sec, double avg_latency_ms, double fraction_done,
                         double time_left_s);

}  // namespace sp::bench
