// BenchThread: one client thread with its own libuv loop and its share of the connections. It
// connects them all, starts them together, paces them under --rate (a timerfd, for sub-millisecond
// precision), enforces connect and request timeouts, and collects per-command statistics that the
// runner merges after the phase. Nothing here is shared with other threads except the few atomics
// the runner polls (progress, finished, failed) and the stop request (a uv_async_t).
#pragma once

#include <sys/socket.h>
#include <uv.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "command_stats.h"
#include "options.h"
#include "rate_pacer.h"
#include "tls/tls_context.h"
#include "verifier.h"
#include "workload.h"

namespace sp::bench {

class BenchConnection;

// Everything a thread needs to run one phase; owned by the runner and read-only here (except the
// verify slots, each of which only one connection of one thread touches).
struct PhaseContext {
  const Options* options = nullptr;
  const Workload* workload = nullptr;
  const Phase* phase = nullptr;
  sockaddr_storage address{};
  std::string address_text;               // "host:port" for messages
  std::vector<sockaddr_storage> sources;  // --source-address, port 0; empty: the kernel picks
  uint32_t run_id = 0;
  uint64_t seed = 0;
  uint32_t total_slots = 0;                    // connections over all threads
  std::vector<VerifySlot>* verify = nullptr;   // indexed by global slot; nullptr without --verify
  std::shared_ptr<const tls::TlsContext> tls;  // --tls: shared by every connection; else nullptr
};

struct ThreadCounters {
  uint64_t connections = 0;       // successful connects (the first ones and reconnects)
  uint64_t reconnects = 0;        // short-connection reconnects (--reconnect-interval, -k 0)
  uint64_t closed_by_server = 0;  // connections the server closed during the run
  uint64_t verify_mismatches = 0;
  uint64_t verify_unverified = 0;
  uint64_t verify_lost = 0;  // --verify-allow-loss: nil reads of acknowledged writes
  std::vector<std::string> verify_messages;  // the first few mismatches
  std::string tls_protocol;  // --tls: what the first handshake negotiated ("TLSv1.3")
  std::string tls_cipher;
};

class BenchThread {
 public:
  BenchThread(const PhaseContext& ctx, uint32_t thread_index, uint32_t first_slot,
              uint32_t connections, double rate, std::vector<uint64_t> budgets);
  ~BenchThread();
  BenchThread(const BenchThread&) = delete;
  BenchThread& operator=(const BenchThread&) = delete;

  // Runs the loop until every connection is done, the run fails or stop() is called.
  void run();
  // Thread-safe: ends the run now (Ctrl-C, or another thread failed).
  void stop();

  // Polled by the runner from its own thread.
  uint64_t progressOps() const { return progress_ops_.load(std::memory_order_relaxed); }
  uint64_t progressLatencyNs() const {
    return progress_latency_ns_.load(std::memory_order_relaxed);
  }
  bool finished() const { return finished_.load(std::memory_order_acquire); }
  bool failed() const { return failed_.load(std::memory_order_acquire); }

  // Valid once finished().
  const std::string& error() const { return error_; }
  const std::vector<CommandStats>& stats() const { return stats_; }
  const ThreadCounters& counters() const { return counters_; }
  uint64_t startNs() const { return start_ns_; }
  uint64_t endNs() const { return end_ns_; }
  bool started() const { return started_; }

  // --- for BenchConnection ---
  const PhaseContext& ctx() const { return ctx_; }
  uv_loop_t* loop() { return &loop_; }
  const RatePacer& pacer() const { return pacer_; }
  bool stopping() const { return stopping_; }
  bool draining() const { return draining_; }
  CommandStats& statsFor(uint32_t command) { return stats_[command]; }
  ThreadCounters& counters() { return counters_; }
  void onConnectionReady();
  void onConnectionDone();
  void onReplies(uint64_t now);
  // Server closed a connection: true when the connection may reconnect (--max-reconnects).
  bool allowReconnect();
  void fail(std::string message);
  void recordMismatch(std::string message);

 private:
  static void onStopAsync(uv_async_t* handle);
  static void onTick(uv_timer_t* handle);
  static void onDeadline(uv_timer_t* handle);
  static void onPacer(uv_poll_t* handle, int status, int events);

  void startLoad();
  void armPacer();
  void shutdown();  // closes every handle; the loop then ends
  void checkTimeouts(uint64_t now);
  void publishProgress();

  PhaseContext ctx_;
  uint32_t index_;
  double rate_;
  uv_loop_t loop_{};
  uv_async_t stop_async_{};
  uv_timer_t tick_timer_{};
  uv_timer_t deadline_timer_{};
  uv_poll_t pacer_poll_{};
  int pacer_fd_ = -1;
  bool pacer_active_ = false;
  RatePacer pacer_;
  uint64_t released_slots_ = 0;
  uint64_t total_budget_ = 0;
  std::vector<std::unique_ptr<BenchConnection>> conns_;
  std::vector<CommandStats> stats_;
  ThreadCounters counters_;
  uint32_t ready_ = 0;
  uint32_t done_ = 0;
  uint32_t reconnects_left_ = 0;
  bool started_ = false;
  bool stopping_ = false;
  bool draining_ = false;
  bool shut_down_ = false;
  uint64_t start_ns_ = 0;
  uint64_t end_ns_ = 0;
  std::string error_;
  std::mutex async_mu_;  // stop() from another thread vs closing stop_async_
  bool async_alive_ = false;
  std::atomic<uint64_t> progress_ops_{0};
  std::atomic<uint64_t> progress_latency_ns_{0};
  std::atomic<bool> finished_{false};
  std::atomic<bool> failed_{false};
};

}  // namespace sp::bench
