// ProxyControl, the control plane the runtime sees: INFO's text from the context, and reload
// refused without a reloader (and answered, never dropped).
#include "control/proxy_control.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "config/config.h"
#include "net/proxy_context.h"
#include "route/topology.h"

namespace sp::control {
namespace {

class ProxyControlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto config = std::make_shared<config::Config>();
    config::ShardConfig shard;
    shard.name = "s0";
    shard.host = "127.0.0.1";
    shard.port = 1;
    config->shards.push_back(shard);
    context_.publish(config, route::Topology::evenSplit({{"s0", "127.0.0.1", 1}}));
  }

  net::ProxyContext context_;
  ProxyControl control_{context_};
};

TEST_F(ProxyControlTest, InfoIsTheProxysReportAndHidesShardsFromNonAdmins) {
  const std::string server = control_.info("server", true);
  EXPECT_TRUE(server.starts_with("# Server\r\n")) << server;
  EXPECT_NE(server.find("\r\nredis_mode:standalone\r\n"), std::string::npos) << server;
  EXPECT_EQ(server.find("# Clients"), std::string::npos) << server;
  EXPECT_NE(control_.info("shards", true).find("# Shards"), std::string::npos);
  EXPECT_EQ(control_.info("shards", false).find("# Shards"), std::string::npos);
}

TEST_F(ProxyControlTest, WithoutAReloaderReloadIsRefusedAndStillAnswered) {
  EXPECT_FALSE(control_.canReload());
  bool answered = false;
  control_.requestReload([&](const net::ReloadOutcome& outcome) {
    answered = true;
    EXPECT_FALSE(outcome.ok);
  });
  EXPECT_TRUE(answered);
}

}  // namespace
}  // namespace sp::control
