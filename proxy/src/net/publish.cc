// Publishing to the context and the workers (net/publish.h).
#include "net/publish.h"

#include <mutex>

#include "net/proxy_context.h"
#include "net/worker.h"

namespace sp::net {
namespace {

std::mutex& publishMutex() {
  static std::mutex mu;
  return mu;
}

void publishLocked(ProxyContext& context, const std::shared_ptr<const config::Config>& config,
                   const route::TopologyPtr& topology) {
  context.publish(config, topology);
  for (Worker* w : context.workers) {
    w->post([config, topology](Worker& worker) { worker.applyConfig(config, topology); });
  }
}

}  // namespace

void publishTopology(ProxyContext& context, std::shared_ptr<const config::Config> config,
                     route::TopologyPtr topology) {
  std::lock_guard<std::mutex> lock(publishMutex());
  publishLocked(context, config, topology);
}

bool updatePublished(ProxyContext& context, const std::function<bool(Published&)>& change) {
  std::lock_guard<std::mutex> lock(publishMutex());
  Published p{context.config(), context.topology()};
  if (!change(p)) {
    return false;
  }
  publishLocked(context, p.config, p.topology);
  return true;
}

}  // namespace sp::net
