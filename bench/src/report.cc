// Text output: memtier-style table, redis-benchmark -q and CSV lines, problem summaries.
#include "report.h"

#include <algorithm>

namespace sp::bench {
namespace {

struct Column {
  const char* title;
  int width;
};

constexpr Column kColumns[] = {
    {"Ops/sec", 12},        {"Hits/sec", 12},    {"Misses/sec", 12},  {"Avg. Latency", 15},
    {"p50 Latency", 15},    {"p90 Latency", 15}, {"p99 Latency", 15}, {"p99.9 Latency", 15},
    {"p99.99 Latency", 15}, {"Max Latency", 15}, {"KB/sec", 12},
};

void printRule(FILE* out, int width, char c) {
  std::string line(static_cast<size_t>(width), c);
  std::fprintf(out, "%s\n", line.c_str());
}

}  // namespace

double toMs(double ns) { return ns / 1e6; }

std::string tlsLine(const TlsSummary& tls) {
  if (!tls.enabled) {
    return "";
  }
  std::string line = "TLS: ";
  line += tls.protocol.empty() ? "no handshake completed" : tls.protocol + " " + tls.cipher;
  line += tls.verify ? ", server certificate verified"
                     : ", server certificate not verified (--tls-skip-verify)";
  if (tls.client_cert) {
    line += ", client certificate";
  }
  return line;
}

void printTable(FILE* out, const std::vector<PhaseResult>& phases, const RunSummary& summary) {
  int type_width = 6;
  for (const auto& p : phases) {
    for (const auto& r : p.rows) {
      type_width = std::max(type_width, static_cast<int>(r.type.size()));
    }
  }
  int width = type_width;
  for (const Column& c : kColumns) {
    width += 1 + c.width;
  }
  if (!summary.description.empty()) {
    std::fprintf(out, "%s\n", summary.description.c_str());
    if (summary.tls.enabled) {
      std::fprintf(out, "%s\n", tlsLine(summary.tls).c_str());
    }
    std::fprintf(out, "\n");
  }
  for (const auto& p : phases) {
    uint64_t ops = 0;
    for (const auto& r : p.rows) {
      if (!(p.totals_row && r.type == "Totals")) {
        ops += r.stats.ops;
      }
    }
    std::fprintf(out, "%s: %llu requests in %.3f s%s\n", p.name.c_str(),
                 static_cast<unsigned long long>(ops), p.duration_s,
                 p.interrupted ? " (interrupted)" : "");
  }
  std::fprintf(out, "\nALL STATS\n");
  printRule(out, width, '=');
  std::fprintf(out, "%-*s", type_width, "Type");
  for (const Column& c : kColumns) {
    std::fprintf(out, " %*s", c.width, c.title);
  }
  std::fprintf(out, "\n");
  printRule(out, width, '-');
  for (const auto& p : phases) {
    for (const auto& r : p.rows) {
      const LatencyHistogram& h = r.stats.latency;
      std::fprintf(out, "%-*s %12.2f", type_width, r.type.c_str(), r.ops_per_sec);
      if (r.has_hits) {
        std::fprintf(out, " %12.2f %12.2f", r.hits_per_sec, r.misses_per_sec);
      } else {
        std::fprintf(out, " %12s %12s", "---", "---");
      }
      if (h.count() > 0) {
        std::fprintf(out, " %15.5f", toMs(h.mean()));
        for (double q : {50.0, 90.0, 99.0, 99.9, 99.99}) {
          std::fprintf(out, " %15.5f", toMs(static_cast<double>(h.percentile(q))));
        }
        std::fprintf(out, " %15.5f", toMs(static_cast<double>(h.max())));
      } else {
        for (int i = 0; i < 7; ++i) {
          std::fprintf(out, " %15s", "---");
        }
      }
      std::fprintf(out, " %12.2f\n", r.kb_per_sec);
    }
  }
  if (summary.connections > 0) {
    std::fprintf(out, "\nConnections: %llu opened, %llu reconnects, %llu closed by the server\n",
                 static_cast<unsigned long long>(summary.connections),
                 static_cast<unsigned long long>(summary.reconnects),
                 static_cast<unsigned long long>(summary.closed_by_server));
  }
}

void printQuiet(FILE* out, const PhaseResult& phase) {
  for (const auto& r : phase.rows) {
    if (phase.totals_row && r.type == "Totals") {
      continue;
    }
    std::fprintf(out, "%s: %.2f requests per second, p50=%.3f msec\n", r.type.c_str(),
                 r.ops_per_sec, toMs(static_cast<double>(r.stats.latency.percentile(50))));
  }
}

void printCsvHeader(FILE* out) {
  std::fprintf(out,
               "\"test\",\"rps\",\"avg_latency_ms\",\"min_latency_ms\",\"p50_latency_ms\","
               "\"p95_latency_ms\",\"p99_latency_ms\",\"max_latency_ms\"\n");
}

void printCsv(FILE* out, const PhaseResult& phase) {
  for (const auto& r : phase.rows) {
    if (phase.totals_row && r.type == "Totals") {
      continue;
    }
    const LatencyHistogram& h = r.stats.latency;
    std::fprintf(out, "\"%s\",\"%.2f\",\"%.3f\",\"%.3f\",\"%.3f\",\"%.3f\",\"%.3f\",\"%.3f\"\n",
                 r.type.c_str(), r.ops_per_sec, toMs(h.mean()), toMs(static_cast<double>(h.min())),
                 toMs(static_cast<double>(h.percentile(50))),
                 toMs(static_cast<double>(h.percentile(95))),
                 toMs(static_cast<double>(h.percentile(99))), toMs(static_cast<double>(h.max())));
  }
}

void printProblems(FILE* out, const std::vector<PhaseResult>& phases, const RunSummary& summary) {
  for (const auto& p : phases) {
    for (const auto& r : p.rows) {
      if ((p.totals_row && r.type == "Totals") || r.stats.errors.total() == 0) {
        continue;
      }
      std::fprintf(out, "Errors in %s: %llu", r.type.c_str(),
                   static_cast<unsigned long long>(r.stats.errors.total()));
      for (const auto& e : r.stats.errors.entries()) {
        std::fprintf(out, " %s=%llu", e.kind.c_str(), static_cast<unsigned long long>(e.count));
      }
      std::fprintf(out, "\n");
      for (const auto& e : r.stats.errors.entries()) {
        if (!e.example.empty()) {
          std::fprintf(out, "  first %s: %s\n", e.kind.c_str(), e.example.c_str());
        }
      }
    }
  }
  if (summary.verify) {
    std::fprintf(out,
                 "Verify: %llu mismatches, %llu unverified reads (no single expected value), "
                 "%llu lost writes\n",
                 static_cast<unsigned long long>(summary.verify_mismatches),
                 static_cast<unsigned long long>(summary.verify_unverified),
                 static_cast<unsigned long long>(summary.verify_lost));
    for (const auto& m : summary.verify_messages) {
      std::fprintf(out, "  mismatch: %s\n", m.c_str());
    }
  }
}

std::string progressLine(const std::string& phase, double elapsed_s, uint64_t ops,
                         double recent_ops_per_sec, double avg_latency_ms, double fraction_done,
                         double time_left_s) {
  char done[48];
  if (time_left_s >= 0) {
    std::snprintf(done, sizeof(done), "%.0fs left", time_left_s);
  } else {
    std::snprintf(done, sizeof(done), "%.0f%% done", fraction_done * 100);
  }
  char buf[320];
  std::snprintf(buf, sizeof(buf), "[%s] %.0fs  %s  %llu ops  %.0f ops/s  avg %.3f ms",
                phase.c_str(), elapsed_s, done, static_cast<unsigned long long>(ops),
                recent_ops_per_sec, avg_latency_ms);
  return buf;
}

}  // namespace sp::bench
