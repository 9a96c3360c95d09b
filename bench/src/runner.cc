// Phase orchestration, signal handling, result merging and exit status.
#include "runner.h"

#include <netdb.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <thread>

#include "bench_thread.h"
#include "core/clock.h"
#include "hgrm_writer.h"
#include "interrupt.h"
#include "percentile_table.h"
#include "report.h"
#include "result_json.h"
#include "workload.h"

namespace sp::bench {
namespace {

bool resolve(const Options& o, sockaddr_storage* out, std::string* error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  const std::string port = std::to_string(o.port);
  const int rc = getaddrinfo(o.host.c_str(), port.c_str(), &hints, &res);
  if (rc != 0 || res == nullptr) {
    *error = "cannot resolve host '" + o.host + "': " + gai_strerror(rc);
    return false;
  }
  std::memcpy(out, res->ai_addr, res->ai_addrlen);
  freeaddrinfo(res);
  return true;
}

// --source-address: numeric addresses of the target's family, port 0 (the kernel picks it).
bool resolveSources(const Options& o, int family, std::vector<sockaddr_storage>* out,
                    std::string* error) {
  addrinfo hints{};
  hints.ai_family = family;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST;
  for (const std::string& text : o.source_addresses) {
    addrinfo* res = nullptr;
    if (getaddrinfo(text.c_str(), nullptr, &hints, &res) != 0 || res == nullptr) {
      *error = "--source-address " + text + " is not an " + (family == AF_INET ? "IPv4" : "IPv6") +
               " address, but " + o.host + " is";
      return false;
    }
    sockaddr_storage ss{};
    std::memcpy(&ss, res->ai_addr, res->ai_addrlen);
    freeaddrinfo(res);
    out->push_back(ss);
  }
  return true;
}

// --tls: one client context for every connection of the run; nullptr with *error naming the file
// or setting at fault.
std::shared_ptr<const tls::TlsContext> makeTlsContext(const Options& o, std::string* error) {
  tls::ClientSettings s;
  s.ca_cert_file = o.tls_ca_cert_file;
  s.cert_file = o.tls_cert_file;
  s.key_file = o.tls_key_file;
  s.server_name = o.tls_sni;
  s.verify = o.tls_verify;
  s.protocols = o.tls_protocols;
  s.ciphers = o.tls_ciphers;
  s.ciphersuites = o.tls_ciphersuites;
  std::shared_ptr<const tls::TlsContext> ctx;
  if (Status made = tls::TlsContext::makeClient(s, &ctx); !made.ok()) {
    *error = made.within("TLS").message();
  }
  return ctx;
}

struct PhaseOutcome {
  PhaseResult result;
  std::string error;
  bool interrupted = false;
};

class Runner {
 public:
  // silent: print nothing (collectBenchmark); otherwise the report as the default subcommand.
  Runner(const Options& o, const Workload& w, bool silent) : o_(o), w_(w), silent_(silent) {}

  RunOutput run();

 private:
  PhaseOutcome runPhase(const Phase& phase);
  void showProgress(const Phase& phase, const std::vector<std::unique_ptr<BenchThread>>& threads,
                    uint64_t started_ns);

  const Options& o_;
  const Workload& w_;
  bool silent_;
  PhaseContext base_;
  std::vector<VerifySlot> verify_;
  RunSummary summary_;
  bool tty_ = false;
  uint64_t last_progress_ns_ = 0;
  uint64_t last_progress_ops_ = 0;
};

RunOutput Runner::run() {
  RunOutput output;
  std::string error;
  if (o_.tls) {
    base_.tls = makeTlsContext(o_, &error);
  }
  if ((o_.tls && base_.tls == nullptr) || !resolve(o_, &base_.address, &error) ||
      !resolveSources(o_, base_.address.ss_family, &base_.sources, &error)) {
    output.status = 1;
    output.error = error;
    if (!silent_) {
      std::fprintf(stderr, "shardbench: error: %s\n", error.c_str());
    }
    return output;
  }
  FILE* out = silent_ ? nullptr : stdout;
  if (!silent_ && !o_.out_file.empty()) {
    out = std::fopen(o_.out_file.c_str(), "w");
    if (out == nullptr) {
      std::fprintf(stderr, "shardbench: error: cannot write %s: %s\n", o_.out_file.c_str(),
                   std::strerror(errno));
      output.status = 1;
      output.error = "cannot write " + o_.out_file;
      return output;
    }
  }
  installInterruptHandler();
  tty_ = !silent_ && o_.progress && isatty(STDERR_FILENO);
  base_.options = &o_;
  base_.workload = &w_;
  base_.address_text = o_.host + ":" + std::to_string(o_.port);
  base_.total_slots = o_.clients_total;
  base_.seed = o_.randomize ? monoNanos() ^ (static_cast<uint64_t>(getpid()) << 32) : o_.seed;
  base_.run_id = static_cast<uint32_t>(monoNanos() ^ (static_cast<uint64_t>(getpid()) << 16));
  if (o_.verify) {
    verify_.resize(o_.clients_total);
    for (uint32_t s = 0; s < o_.clients_total; ++s) {
      verify_[s].keys.assign(KeyOwnership::partitionSize(w_.keys, s, o_.clients_total), KeyState{});
    }
    base_.verify = &verify_;
  }

  char desc[512];
  std::snprintf(
      desc, sizeof(desc),
      "shardbench %s: %s, %u thread%s, %u connections, pipeline %u, %s, %u%s-byte "
      "values%s%s%s",
      SHARDPROXY_VERSION, base_.address_text.c_str(), o_.threads, o_.threads == 1 ? "" : "s",
      o_.clients_total, o_.pipeline,
      o_.test_time_s > 0 ? (std::to_string(o_.test_time_s) + " s per test").c_str()
                         : (std::to_string(o_.requests_total) + " requests per test").c_str(),
      o_.data_size_min,
      o_.data_size_max != o_.data_size_min ? ("-" + std::to_string(o_.data_size_max)).c_str() : "",
      o_.rate > 0 ? (", rate " + std::to_string(static_cast<uint64_t>(o_.rate)) + "/s").c_str()
                  : "",
      o_.tls ? ", TLS" : "", o_.verify ? ", verify" : "");
  summary_.description = desc;
  summary_.verify = o_.verify;
  summary_.tls.enabled = o_.tls;
  summary_.tls.verify = o_.tls_verify;
  summary_.tls.client_cert = !o_.tls_cert_file.empty();

  std::vector<PhaseResult> results;
  std::string fatal;
  bool interrupted = false;
  if (out != nullptr && o_.csv) {
    printCsvHeader(out);
  }
  for (const Phase& phase : w_.phases) {
    PhaseOutcome po = runPhase(phase);
    uint64_t ops = 0;
    for (const auto& r : po.result.rows) {
      ops += r.stats.ops + r.stats.errors.total();
    }
    if (ops == 0 && (!po.error.empty() || po.interrupted)) {
      fatal = po.error;  // it never got going (refused, AUTH failure): no empty report lines
      interrupted = po.interrupted;
      break;
    }
    if (out != nullptr) {
      if (o_.csv) {
        printCsv(out, po.result);
      } else if (o_.quiet) {
        printQuiet(out, po.result);
      }
      std::fflush(out);
    }
    results.push_back(std::move(po.result));
    if (!po.error.empty() || po.interrupted) {
      fatal = po.error;
      interrupted = po.interrupted;
      break;
    }
  }

  if (out != nullptr) {
    if (!o_.quiet && !o_.csv && !results.empty()) {
      printTable(out, results, summary_);
    }
    if (!o_.print_percentiles.empty() && !results.empty()) {
      printPercentileTables(out, results, o_.print_percentiles);
    }
    printProblems(out, results, summary_);
    std::fflush(out);
  }

  int status = 0;
  uint64_t error_replies = 0;
  for (const auto& p : results) {
    for (const auto& r : p.rows) {
      if (!(p.totals_row && r.type == "Totals")) {
        error_replies += r.stats.errors.total();
      }
    }
  }
  RunRecord& rec = output.record;
  rec.command_line = o_.command_line;
  rec.target = base_.address_text;
  rec.summary = summary_;
  rec.phases = std::move(results);
  rec.percentiles = o_.print_percentiles;
  if (!silent_ && !o_.json_out_file.empty()) {
    FILE* jf = std::fopen(o_.json_out_file.c_str(), "w");
    const std::string text = toJson(rec);
    if (jf == nullptr || std::fwrite(text.data(), 1, text.size(), jf) != text.size()) {
      std::fprintf(stderr, "shardbench: error: cannot write %s: %s\n", o_.json_out_file.c_str(),
                   std::strerror(errno));
      status = 1;
    }
    if (jf != nullptr) {
      std::fclose(jf);
    }
  }
  if (!silent_ && !o_.hdr_file_prefix.empty() && !rec.phases.empty()) {
    std::vector<std::string> written;
    std::string hdr_error;
    if (!writeHdrFiles(o_.hdr_file_prefix, rec.phases, summary_.description, &written,
                       &hdr_error)) {
      std::fprintf(stderr, "shardbench: error: %s\n", hdr_error.c_str());
      status = 1;
    }
  }
  if (out != nullptr && out != stdout) {
    std::fclose(out);
  }

  std::string message;
  if (!fatal.empty()) {
    message = fatal;
    status = 1;
  } else if (error_replies > 0) {
    message = std::to_string(error_replies) + " error replies (see the report)";
    status = 1;
  }
  if (!message.empty() && !silent_) {
    std::fprintf(stderr, "shardbench: error: %s\n", message.c_str());
  }
  if (summary_.verify_mismatches > 0) {
    if (!silent_) {
      std::fprintf(stderr, "shardbench: verify failed: %llu mismatches\n",
                   static_cast<unsigned long long>(summary_.verify_mismatches));
    }
    if (message.empty()) {
      message = std::to_string(summary_.verify_mismatches) + " verify mismatches";
    }
    status = 3;
  }
  if (interrupted) {
    if (!silent_) {
      std::fprintf(stderr, "shardbench: interrupted; the report above is partial\n");
    }
    if (message.empty()) {
      message = "interrupted";
    }
    status = 130;
  }
  output.status = status;
  output.error = message;
  output.interrupted = interrupted;
  return output;
}

PhaseOutcome Runner::runPhase(const Phase& phase) {
  PhaseContext ctx = base_;
  ctx.phase = &phase;
  std::vector<std::unique_ptr<BenchThread>> threads;
  uint32_t slot = 0;
  const uint64_t n = o_.requests_total;
  const uint64_t c = o_.clients_total;
  for (uint32_t t = 0; t < o_.threads; ++t) {
    const uint32_t conns = o_.clientsOnThread(t);
    std::vector<uint64_t> budgets;
    for (uint32_t i = 0; i < conns; ++i, ++slot) {
      if (o_.test_time_s > 0) {
        budgets.push_back(UINT64_MAX);
      } else if (o_.requests_per_client > 0) {
        budgets.push_back(o_.requests_per_client);
      } else {
        budgets.push_back(n / c + (slot < n % c ? 1 : 0));
      }
    }
    const double rate = o_.rate * conns / static_cast<double>(c);
    threads.push_back(std::make_unique<BenchThread>(ctx, t, slot - conns, conns, rate, budgets));
  }
  // --client-cpus (matrix, scenario): each client thread pins itself; the orchestrating thread
  // stays unpinned, so the servers it starts do not inherit the client's CPUs.
  std::vector<std::string> pin_errors(threads.size());
  std::vector<std::thread> workers;
  for (size_t i = 0; i < threads.size(); ++i) {
    workers.emplace_back([this, p = threads[i].get(), pin_error = &pin_errors[i]] {
      pinCurrentThread(o_.client_cpus, pin_error);  // a failure fails the phase after it ran
      p->run();
    });
  }

  PhaseOutcome po;
  const uint64_t started = monoNanos();
  last_progress_ns_ = started;
  last_progress_ops_ = 0;
  bool stopping = false;
  for (;;) {
    bool all_done = true;
    bool any_failed = false;
    for (auto& t : threads) {
      all_done = all_done && t->finished();
      any_failed = any_failed || t->failed();
    }
    if (all_done) {
      break;
    }
    if (interruptRequested()) {
      po.interrupted = true;
      stopping = true;
    }
    if (any_failed) {
      stopping = true;
    }
    if (stopping) {
      for (auto& t : threads) {
        t->stop();  // repeated until it has taken effect: a thread may not be looping yet
      }
    }
    if (tty_) {
      showProgress(phase, threads, started);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (auto& w : workers) {
    w.join();
  }
  for (const auto& e : pin_errors) {
    if (!e.empty() && po.error.empty()) {
      po.error = "client thread: " + e;
    }
  }
  if (tty_) {
    std::fprintf(stderr, "\r\x1b[K");
  }

  // Merge the threads' rows.
  PhaseResult& r = po.result;
  r.name = phase.name;
  r.totals_row = phase.totals_row;
  r.interrupted = po.interrupted;
  for (const auto& cmd : phase.commands) {
    RowResult row;
    row.type = cmd.row;
    row.has_hits = cmd.kind == OpKind::kGet;
    r.rows.push_back(std::move(row));
  }
  uint64_t start = UINT64_MAX;
  uint64_t end = 0;
  for (auto& t : threads) {
    for (size_t i = 0; i < phase.commands.size(); ++i) {
      r.rows[i].stats.merge(t->stats()[i]);
    }
    if (t->started()) {
      start = std::min(start, t->startNs());
      end = std::max(end, t->endNs());
    }
    const ThreadCounters& tc = t->counters();
    summary_.connections += tc.connections;
    summary_.reconnects += tc.reconnects;
    summary_.closed_by_server += tc.closed_by_server;
    if (summary_.tls.protocol.empty() && !tc.tls_protocol.empty()) {
      summary_.tls.protocol = tc.tls_protocol;
      summary_.tls.cipher = tc.tls_cipher;
    }
    summary_.verify_mismatches += tc.verify_mismatches;
    summary_.verify_unverified += tc.verify_unverified;
    summary_.verify_lost += tc.verify_lost;
    for (const auto& m : tc.verify_messages) {
      if (summary_.verify_messages.size() < o_.verify_print) {
        summary_.verify_messages.push_back(m);
      }
    }
    if (t->failed() && po.error.empty()) {
      po.error = t->error();
    }
  }
  r.duration_s = end > start ? static_cast<double>(end - start) / 1e9 : 0;
  for (auto& row : r.rows) {
    row.computeRates(r.duration_s);
  }
  if (phase.totals_row) {
    RowResult totals;
    totals.type = "Totals";
    for (const auto& row : r.rows) {
      totals.stats.merge(row.stats);
      totals.has_hits = totals.has_hits || row.has_hits;
    }
    totals.computeRates(r.duration_s);
    r.rows.push_back(std::move(totals));
  }
  return po;
}

void Runner::showProgress(const Phase& phase,
                          const std::vector<std::unique_ptr<BenchThread>>& threads,
                          uint64_t started_ns) {
  const uint64_t now = monoNanos();
  if (now - last_progress_ns_ < 1000000000ull) {
    return;
  }
  uint64_t ops = 0;
  uint64_t latency = 0;
  for (const auto& t : threads) {
    ops += t->progressOps();
    latency += t->progressLatencyNs();
  }
  const double window = static_cast<double>(now - last_progress_ns_) / 1e9;
  const double rate = static_cast<double>(ops - last_progress_ops_) / window;
  const double elapsed = static_cast<double>(now - started_ns) / 1e9;
  const double avg_ms = ops > 0 ? static_cast<double>(latency) / ops / 1e6 : 0;
  double fraction = 0;
  double left = -1;
  if (o_.test_time_s > 0) {
    left = std::max(0.0, o_.test_time_s - elapsed);
  } else if (o_.requests_total > 0) {
    fraction = static_cast<double>(ops) / static_cast<double>(o_.requests_total);
  }
  const std::string line = progressLine(phase.name, elapsed, ops, rate, avg_ms, fraction, left);
  std::fprintf(stderr, "\r%s\x1b[K", line.c_str());
  std::fflush(stderr);
  last_progress_ns_ = now;
  last_progress_ops_ = ops;
}

}  // namespace

int runBenchmark(const Options& options) {
  Workload workload;
  std::string error;
  if (!buildWorkload(options, &workload, &error)) {
    std::fprintf(stderr, "shardbench: %s\n", error.c_str());
    return 2;
  }
  Runner runner(options, workload, false);
  return runner.run().status;
}

RunOutput collectBenchmark(const Options& options) {
  Workload workload;
  RunOutput output;
  if (!buildWorkload(options, &workload, &output.error)) {
    output.status = 2;
    return output;
  }
  Runner runner(options, workload, true);
  return runner.run();
}

}  // namespace sp::bench
