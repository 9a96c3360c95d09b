// What the proxy records about each request as it completes: shardproxy_requests_total{class,
// result}, shardproxy_request_duration_seconds{class}, the per-shard backend histogram, error and
// redirect counters, and the slow log. The hooks are called from the session's request path and
// cost a few plain counter increments; the clock is read once per completed request (the slow log
// needs it even with SHARDPROXY_METRICS=0). BackendConn times each shard reply itself.
#pragma once

#include <string>
#include <string_view>

#include "core/clock.h"
#include "net/worker.h"
#include "net/worker_stats.h"
#include "resp/command_table.h"
#include "resp/errors.h"
#include "resp/reply_reader.h"
#include "session/pending_request.h"

namespace sp::session {

// A completed request's result label: an error reply is the proxy's own for a shard that was down,
// ejected or failed the request when a fragment was answered so (backend::deliverUnavailable
// marks the request kShardUnavailable); any other error reply is the shard's (or the command's)
// answer, or another of the proxy's own (counted by its kind in observeCompletion).
inline net::RequestResult replyResult(const backend::InFlightRequest& request,
                                      std::string_view reply) {
  if (!resp::isError(reply)) {
    return net::RequestResult::kOk;
  }
  return request.proxy_error == resp::err::ProxyError::kShardUnavailable
             ? net::RequestResult::kUnavailable
             : net::RequestResult::kError;
}

// A request answered at once by the proxy (a local command, or a refusal).
// INFO commandstats counts it as a call taking no time (answered before the clock is read).
inline void observeImmediate(net::WorkerStats& stats, const resp::CommandInfo* cmd,
                             net::RequestResult result) {
  stats.countRequest(net::commandClass(cmd), result);
  stats.commands_by_name.observe(cmd, 0, 0, result != net::RequestResult::kOk);
}

// One of the proxy's own errors as a reply the proxy writes itself (a local command's), counted
// by its kind.
inline void appendOwnError(net::WorkerStats& stats, const resp::err::ErrorReply& error,
                           std::string* reply) {
  stats.countProxyError(error.kind());
  reply->append(error.text());
}

// Records a slow log entry for `request` (out of line: rare).
void recordSlowRequest(net::Worker& worker, const PendingRequest& request, uint64_t duration_us);

// A routed (or deferred) request whose reply is complete: `reply` is what the client gets (the
// merged reply of a split request). Records the result, the duration and, past the threshold,
// a slow log entry.
inline void observeCompletion(net::Worker& worker, const PendingRequest& request,
                              std::string_view reply) {
  // The backend hook has just measured the reply that completes the request: reuse it.
  const bool measured = request.reply_bucket != PendingRequest::kNoBucket;
  const uint64_t duration_us =
      measured ? request.reply_us : (monoNanos() - request.start_ns) / 1000;
  net::WorkerStats& stats = worker.stats();
  const net::CommandClass cls = net::commandClass(request.cmd);
  const net::RequestResult result = replyResult(request, reply);
  const size_t bucket = measured ? request.reply_bucket : metrics::latencyBucket(duration_us);
  stats.countRequest(cls, result);
  stats.request_duration[static_cast<size_t>(cls)].observe(duration_us, bucket);
  // INFO commandstats / latencystats / errorstats.
  stats.commands_by_name.observe(request.cmd, duration_us, bucket,
                                 result != net::RequestResult::kOk);
  if (result != net::RequestResult::kOk) {
    stats.error_codes.count(reply);
    stats.countProxyError(request.proxy_error);
  }
  if (duration_us >= worker.slowlogThresholdUs() && worker.slowlogEnabled()) {
    recordSlowRequest(worker, request, duration_us);
  }
}

}  // namespace sp::session
