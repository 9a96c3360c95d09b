// ClusterRedirector: follows MOVED and ASK, retries TRYAGAIN after a pause.
#include "backend/cluster_redirector.h"

#include <algorithm>

#include "backend/backend_conn.h"
#include "backend/backend_pool.h"
#include "config/value_parser.h"
#include "net/worker.h"

namespace sp::backend {

ClusterRedirector::ClusterRedirector(net::Worker& worker, BackendPool& pool)
    : worker_(worker), pool_(pool) {}

void ClusterRedirector::start() {
  retries_.init(worker_.timers(), "cluster.retry", [this](Retry& retry) { onRetryDue(retry); });
  started_ = true;
}

bool ClusterRedirector::redirect(InFlightRequest* request, uint32_t fragment,
                                 std::string_view reply) {
  // "-MOVED 3999 127.0.0.1:6381\r\n" or "-ASK 3999 127.0.0.1:6381\r\n"
  Resend resend{};
  if (shut_down_ || !resend_lookup.get()(request, fragment, &resend) ||
      resend.tries->redirects >= worker_.config().max_redirects) {
    return false;
  }
  const bool ask = reply.starts_with("-ASK ");
  if (!ask && !reply.starts_with("-MOVED ")) {
    return false;
  }
  std::string_view rest = reply.substr(ask ? 5 : 7);
  if (rest.ends_with("\r\n")) {
    rest.remove_suffix(2);
  }
  const size_t space = rest.find(' ');
  const size_t colon = rest.rfind(':');
  if (space == std::string_view::npos || colon == std::string_view::npos || colon < space) {
    return false;
  }
  // The host as the cluster writes it (an IPv6 address without brackets: hence the last colon).
  const std::string host(rest.substr(space + 1, colon - space - 1));
  uint16_t port = 0;
  if (host.empty() || !config::parsePort(rest.substr(colon + 1), &port).ok()) {
    return false;
  }
  ++resend.tries->redirects;
  if (!ask) {
    worker_.requestTopologyRefresh();
  }
  sendToNode(request, fragment, resend, host, port, ask);
  return true;
}

bool ClusterRedirector::retryLater(InFlightRequest* request, uint32_t fragment,
                                   const route::ShardAddress& node, std::string_view reply) {
  Resend resend{};
  if (shut_down_ || !started_ || !resend_lookup.get()(request, fragment, &resend) ||
      resend.tries->retries >= kTryAgainRetries) {
    return false;
  }
  const uint64_t delay =
      std::min(kTryAgainFirstDelayMs << resend.tries->retries, kTryAgainMaxDelayMs);
  ++resend.tries->retries;
  retries_.push(delay, Retry{request, fragment, node.host, node.port, std::string(reply)});
  return true;
}

void ClusterRedirector::onRetryDue(Retry& retry) {
  Resend resend{};
  if (!resend_lookup.get()(retry.request, retry.fragment, &resend)) {
    deliverReply(worker_, retry.request, retry.fragment, retry.reply);  // releases it
    return;
  }
  sendToNode(retry.request, retry.fragment, resend, retry.host, retry.port, false);
}

void ClusterRedirector::sendToNode(InFlightRequest* request, uint32_t fragment,
                                   const Resend& resend, const std::string& host, uint16_t port,
                                   bool asking) {
  BackendConn& target = pool_.node(host, port, resend.shard, resend.client_id, resend.protocol);
  if (!target.accepting()) {
    deliverUnavailable(worker_, request, fragment, target.ejectedError());
    return;
  }
  if (asking) {
    target.sendAsking();
  }
  target.send(resend.bytes, request, fragment);
}

void ClusterRedirector::shutdown() {
  if (shut_down_) {
    return;
  }
  shut_down_ = true;
  if (!started_) {
    return;
  }
  // Their clients have gone: answering the waiting retries releases the requests.
  for (Retry& retry : retries_.close()) {
    deliverReply(worker_, retry.request, retry.fragment, retry.reply);
  }
}

}  // namespace sp::backend
