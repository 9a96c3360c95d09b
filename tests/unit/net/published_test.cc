// updatePublished: a read-modify-write of the published configuration and topology is atomic
// with respect to every other publisher, so concurrent changes (CONFIG SET on two workers, a
// Sentinel failover during a CONFIG SET) all survive.
#include <gtest/gtest.h>

#include <memory>
#include <thread>
#include <vector>

#include "config/config.h"
#include "net/proxy_context.h"
#include "net/publish.h"

namespace sp::net {
namespace {

TEST(UpdatePublishedTest, ConcurrentChangesAllSurvive) {
  ProxyContext context;  // no workers: publishing only updates the context
  auto initial = std::make_shared<config::Config>();
  initial->limits.timeout = 0;
  initial->slowlog_max_len = 0;
  context.publish(initial, nullptr);
  constexpr int kRounds = 2000;
  auto bump = [&](bool timeout) {
    for (int i = 0; i < kRounds; ++i) {
      updatePublished(context, [&](Published& p) {
        auto fresh = std::make_shared<config::Config>(*p.config);
        if (timeout) {
          ++fresh->limits.timeout;
        } else {
          ++fresh->slowlog_max_len;
        }
        p.config = std::move(fresh);
        return true;
      });
    }
  };
  std::thread a(bump, true);
  std::thread b(bump, false);
  bump(true);
  a.join();
  b.join();
  EXPECT_EQ(context.config()->limits.timeout, 2u * kRounds);
  EXPECT_EQ(context.config()->slowlog_max_len, static_cast<uint32_t>(kRounds));
}

TEST(UpdatePublishedTest, AChangeThatDeclinesPublishesNothing) {
  ProxyContext context;
  auto initial = std::make_shared<config::Config>();
  context.publish(initial, nullptr);
  EXPECT_FALSE(updatePublished(context, [](Published& p) {
    p.config = std::make_shared<config::Config>();
    return false;
  }));
  EXPECT_EQ(context.config(), initial);
}

}  // namespace
}  // namespace sp::net
