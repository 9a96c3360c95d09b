// Reading, merging and reporting result files.
#include "merge_command.h"

#include <cstdio>
#include <fstream>
#include <sstream>

#include "report.h"

namespace sp::bench {

void mergeRuns(RunRecord* into, const RunRecord& other) {
  for (const PhaseResult& p : other.phases) {
    PhaseResult* target = nullptr;
    for (auto& q : into->phases) {
      if (q.name == p.name) {
        target = &q;
      }
    }
    if (target == nullptr) {
      into->phases.push_back(p);
      continue;
    }
    target->duration_s = std::max(target->duration_s, p.duration_s);
    target->interrupted = target->interrupted || p.interrupted;
    target->totals_row = target->totals_row || p.totals_row;
    for (const RowResult& r : p.rows) {
      RowResult* row = nullptr;
      for (auto& q : target->rows) {
        if (q.type == r.type) {
          row = &q;
        }
      }
      if (row == nullptr) {
        target->rows.push_back(r);
      } else {
        row->mergeRun(r);
      }
    }
  }
  RunSummary& s = into->summary;
  s.connections += other.summary.connections;
  s.reconnects += other.summary.reconnects;
  s.closed_by_server += other.summary.closed_by_server;
  if (!s.tls.enabled && other.summary.tls.enabled) {
    s.tls = other.summary.tls;  // the first TLS run's settings
  }
  s.verify = s.verify || other.summary.verify;
  s.verify_mismatches += other.summary.verify_mismatches;
  s.verify_unverified += other.summary.verify_unverified;
  s.verify_lost += other.summary.verify_lost;
  for (const auto& m : other.summary.verify_messages) {
    if (s.verify_messages.size() < 20) {
      s.verify_messages.push_back(m);
    }
  }
}

namespace {

const char* kMergeUsage =
    "Usage: shardbench merge [-q|--csv] [--json-out-file OUT] [--out-file REPORT] a.json b.json "
    "...\n"
    "Merges --json-out-file results of runs taken side by side: counts and histogram buckets add\n"
    "up, percentiles are recomputed from the merged histograms, rates add up, and each phase\n"
    "lasts as long as its longest run.\n";

}  // namespace

int runMerge(const std::vector<std::string>& args) {
  bool quiet = false;
  bool csv = false;
  std::string json_out;
  std::string out_file;
  std::vector<std::string> files;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](const std::string& flag, std::string* v) {
      if (a.starts_with(flag + "=")) {
        *v = a.substr(flag.size() + 1);
        return true;
      }
      if (a == flag && i + 1 < args.size()) {
        *v = args[++i];
        return true;
      }
      return false;
    };
    if (a == "--help") {
      std::fputs(kMergeUsage, stdout);
      return 0;
    }
    if (a == "-q" || a == "--quiet") {
      quiet = true;
    } else if (a == "--csv") {
      csv = true;
    } else if (value("--json-out-file", &json_out) || value("--out-file", &out_file)) {
      continue;
    } else if (a.starts_with("-")) {
      std::fprintf(stderr, "shardbench merge: unknown or incomplete flag '%s'\n%s", a.c_str(),
                   kMergeUsage);
      return 2;
    } else {
      files.push_back(a);
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "shardbench merge: no result files given\n%s", kMergeUsage);
    return 2;
  }
  RunRecord merged;
  for (size_t i = 0; i < files.size(); ++i) {
    std::ifstream in(files[i], std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "shardbench merge: cannot read %s\n", files[i].c_str());
      return 1;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    RunRecord run;
    std::string error;
    if (!fromJson(ss.str(), &run, &error)) {
      std::fprintf(stderr, "shardbench merge: %s: %s\n", files[i].c_str(), error.c_str());
      return 1;
    }
    if (i == 0) {
      merged.command_line = run.command_line;
      merged.target = run.target;
      merged.summary.description = run.summary.description;
      merged.summary.verify = run.summary.verify;
      merged.phases = {};
    }
    mergeRuns(&merged, run);
    merged.sources.push_back(files[i]);
  }
  merged.summary.description = "shardbench merge of " + std::to_string(files.size()) +
                               " runs (first: " + merged.summary.description + ")";

  FILE* out = stdout;
  if (!out_file.empty()) {
    out = std::fopen(out_file.c_str(), "w");
    if (out == nullptr) {
      std::fprintf(stderr, "shardbench merge: cannot write %s\n", out_file.c_str());
      return 1;
    }
  }
  if (csv) {
    printCsvHeader(out);
    for (const auto& p : merged.phases) {
      printCsv(out, p);
    }
  } else if (quiet) {
    for (const auto& p : merged.phases) {
      printQuiet(out, p);
    }
  } else {
    printTable(out, merged.phases, merged.summary);
  }
  printProblems(out, merged.phases, merged.summary);
  if (out != stdout) {
    std::fclose(out);
  }
  if (!json_out.empty()) {
    std::ofstream jf(json_out, std::ios::binary);
    jf << toJson(merged);
    if (!jf) {
      std::fprintf(stderr, "shardbench merge: cannot write %s\n", json_out.c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace sp::bench
