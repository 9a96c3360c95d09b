// Running a point's shardbench runs side by side and sampling the target while they run.
#include "point_executor.h"

#include <hiredis/hiredis.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "fd_lifecycle.h"
#include "interrupt.h"
#include "runner.h"

namespace sp::bench {
namespace {

// Samples RSS and INFO clients until stopped.
class Monitor {
 public:
  Monitor(const Target& target, const ExecuteOptions& options)
      : target_(target), options_(options) {}
  ~Monitor() { stop(); }

  void start() {
    if (!(options_.proxy_rss && target_.pid > 0) && !options_.info_clients) {
      return;
    }
    thread_ = std::thread([this] { loop(); });
  }
  void stop() {
    stop_.store(true);
    if (thread_.joinable()) {
      thread_.join();
    }
  }
  std::optional<double> rssPeakKb() const { return rss_peak_kb_; }
  std::optional<double> clientsPeak() const { return clients_peak_; }

 private:
  void loop() {
    redisContext* c = nullptr;
    bool info_ok = options_.info_clients;
    while (!stop_.load()) {
      if (options_.proxy_rss && target_.pid > 0) {
        const long rss = processRssKb(target_.pid);
        if (rss > 0) {
          rss_peak_kb_ = std::max(rss_peak_kb_.value_or(0), static_cast<double>(rss));
        }
      }
      if (info_ok) {
        if (c == nullptr) {
          FdLifecycleGuard fds;  // the client threads close theirs unseen by TSAN
          c = redisConnectWithTimeout(target_.endpoint.host.c_str(), target_.endpoint.port,
                                      timeval{3, 0});
          if (c != nullptr && !c->err) {
            redisSetTimeout(c, timeval{3, 0});
          }
        }
        if (c != nullptr && !c->err) {
          auto* r = static_cast<redisReply*>(redisCommand(c, "INFO clients"));
          if (r != nullptr && r->type == REDIS_REPLY_STRING) {
            const std::string v = infoValue(std::string_view(r->str, r->len), "connected_clients");
            if (!v.empty()) {
              // Our own INFO connection is one of them.
              const double n = std::max(0.0, std::strtod(v.c_str(), nullptr) - 1);
              clients_peak_ = std::max(clients_peak_.value_or(0), n);
            }
          } else if (r != nullptr) {
            info_ok = false;  // an endpoint without INFO (twemproxy): stop asking
          }
          if (r != nullptr) {
            freeReplyObject(r);
          } else {
            redisFree(c);  // timed out under load: reconnect next time
            c = nullptr;
          }
        } else if (c != nullptr) {
          redisFree(c);
          c = nullptr;
        }
      }
      for (int i = 0; i < 10 && !stop_.load(); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    }
    if (c != nullptr) {
      redisFree(c);
    }
  }

  const Target& target_;
  ExecuteOptions options_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::optional<double> rss_peak_kb_;
  std::optional<double> clients_peak_;
};

std::string targetDied(const Target& target, const char* when) {
  std::string msg = target.name + " " + when + " (" + target.process->describeExit() + ")";
  const std::string tail = target.process->logTail(600);
  if (!tail.empty()) {
    msg += "; its log ends with: " + tail;
  }
  return msg;
}

// The run's error, with the first error reply when it failed because of error replies.
std::string firstError(const RunOutput& output) {
  std::string message = output.error;
  for (const auto& phase : output.record.phases) {
    for (const auto& row : phase.rows) {
      for (const auto& e : row.stats.errors.entries()) {
        if (!e.example.empty()) {
          return message + "; the first: " + e.example.substr(0, 300);
        }
      }
    }
  }
  return message;
}

}  // namespace

std::optional<double> usedMemoryBytes(const std::vector<Endpoint>& servers) {
  double total = 0;
  for (const auto& s : servers) {
    std::string info;
    std::string error;
    if (!redisCall(s, {"INFO", "memory"}, &info, &error, 5000)) {
      return std::nullopt;
    }
    const std::string v = infoValue(info, "used_memory");
    if (v.empty()) {
      return std::nullopt;
    }
    total += std::strtod(v.c_str(), nullptr);
  }
  return total;
}

Measurement executePoint(const PlannedPoint& point, const Target& target, int rep,
                         const ExecuteOptions& options) {
  Measurement m;
  m.point = point.label;
  m.target = target.name;
  m.rep = rep;
  m.connections = point.connections;
  for (const auto& run : point.runs) {
    m.commands.push_back(commandLine(run, target.endpoint.host, target.endpoint.port));
  }
  if (!point.skip_reason.empty()) {
    m.status = MeasureStatus::kSkipped;
    m.message = point.skip_reason;
    return m;
  }
  if (target.process != nullptr && !target.process->running()) {
    m.status = MeasureStatus::kFailed;
    m.message = targetDied(target, "was not running before the run");
    return m;
  }
  if (options.proxy_rss && target.pid > 0) {
    const long rss = processRssKb(target.pid);
    if (rss > 0) {
      m.proxy_rss_kb_before = static_cast<double>(rss);
    }
  }
  std::vector<RunOutput> outputs(point.runs.size());
  Monitor monitor(target, options);
  monitor.start();
  const auto started = std::chrono::steady_clock::now();
  auto runOne = [&](size_t i) {
    Options o = point.runs[i].options;
    o.host = target.endpoint.host;
    o.port = target.endpoint.port;
    o.command_line = m.commands[i];
    outputs[i] = collectBenchmark(o);
  };
  if (point.runs.size() == 1) {
    runOne(0);
  } else {
    std::vector<std::thread> threads;
    for (size_t i = 0; i < point.runs.size(); ++i) {
      threads.emplace_back(runOne, i);
    }
    for (auto& t : threads) {
      t.join();
    }
  }
  m.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  monitor.stop();
  m.proxy_rss_kb_peak = monitor.rssPeakKb();
  m.connected_clients_peak = monitor.clientsPeak();
  if (options.shard_memory && !target.flush.empty()) {
    m.shard_memory_bytes = usedMemoryBytes(target.flush);
  }

  m.status = MeasureStatus::kOk;
  for (size_t i = 0; i < point.runs.size(); ++i) {
    const std::string& name = point.runs[i].name;
    for (const auto& phase : outputs[i].record.phases) {
      for (const auto& row : phase.rows) {
        m.rows.push_back(summarizeRow(row, name.empty() ? row.type : name + "/" + row.type));
      }
    }
    if (outputs[i].status != 0 && m.status == MeasureStatus::kOk) {
      m.status = MeasureStatus::kFailed;
      m.message = (name.empty() ? "" : "run '" + name + "': ") + firstError(outputs[i]);
    }
    m.records.emplace_back(name, std::move(outputs[i].record));
  }
  if (target.process != nullptr && !target.process->running()) {
    m.status = MeasureStatus::kFailed;
    m.message = targetDied(target, "exited during the run");
  }
  if (interruptRequested() && m.status == MeasureStatus::kOk) {
    m.status = MeasureStatus::kFailed;
    m.message = "interrupted";
  }
  return m;
}

}  // namespace sp::bench
