// superviseTwemproxyPools: every pool's configuration is checked before anything starts; any
// error is printed for each pool at fault and the supervisor exits 2 without spawning a process.
// (Serving pools spawns the proxy again and belongs to the integration tests.)
#include "control/pool_supervisor.h"

#include <gtest/gtest.h>

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "config/loader.h"

namespace sp::control {
namespace {

TEST(PoolSupervisorTest, AMissingFileStopsEveryPoolBeforeAnyStarts) {
  config::CommandLine cmdline;
  cmdline.twemproxy_config = "/nonexistent/shardproxy-test/nutcracker.yml";
  ::testing::internal::CaptureStderr();
  const int status = superviseTwemproxyPools(cmdline, {"alpha", "beta"});
  const std::string printed = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(status, 2);
  EXPECT_NE(printed.find("shardproxy: "), std::string::npos) << printed;
  EXPECT_NE(printed.find(cmdline.twemproxy_config), std::string::npos) << printed;
}

TEST(PoolSupervisorTest, APoolTheFileLacksIsNamedAndNothingStarts) {
  char dir[] = "/tmp/sp-pools-test-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string file = std::string(dir) + "/nutcracker.yml";
  std::ofstream(file) << "alpha:\n  listen: 127.0.0.1:1\n  servers:\n    - 127.0.0.1:2:1\n";
  config::CommandLine cmdline;
  cmdline.twemproxy_config = file;
  ::testing::internal::CaptureStderr();
  const int status = superviseTwemproxyPools(cmdline, {"alpha", "gamma"});
  const std::string printed = ::testing::internal::GetCapturedStderr();
  std::filesystem::remove_all(dir);
  EXPECT_EQ(status, 2);
  EXPECT_NE(printed.find("--pool: no pool 'gamma' in "), std::string::npos) << printed;
  EXPECT_EQ(printed.find("'alpha'"), std::string::npos) << printed;  // alpha itself is fine
}

}  // namespace
}  // namespace sp::control
