// Tests for session/client_auth.cc: who needs an admin user (CLIENT LIST, INFO shards), the
// -NOPERM wording, and how late AUTH attempts are answered after failures.
#include "session/client_auth.h"

#include <gtest/gtest.h>

#include <string_view>
#include <vector>

namespace sp::session {
namespace {

const resp::CommandInfo& resolve(const std::vector<std::string_view>& args) {
  const resp::CommandInfo* cmd = resp::CommandTable::instance().resolve(args);
  EXPECT_NE(cmd, nullptr);
  return *cmd;
}

bool adminOnly(std::vector<std::string_view> args) { return needsAdmin(resolve(args), args); }

TEST(ClientAuthTest, CommandsThatShowOthersNeedAnAdmin) {
  EXPECT_TRUE(adminOnly({"CLIENT", "LIST"}));
  EXPECT_TRUE(adminOnly({"client", "list", "id", "3"}));
  EXPECT_TRUE(adminOnly({"CLIENT", "KILL", "ID", "3"}));
  EXPECT_TRUE(adminOnly({"INFO", "shards"}));
  EXPECT_TRUE(adminOnly({"info", "clients", "SHARDS"}));
  EXPECT_FALSE(adminOnly({"CLIENT", "INFO"}));  // the caller only, as in Redis
  EXPECT_FALSE(adminOnly({"CLIENT", "ID"}));
  EXPECT_FALSE(adminOnly({"INFO"}));
  EXPECT_FALSE(adminOnly({"INFO", "all"}));
  EXPECT_FALSE(adminOnly({"INFO", "shardsx"}));
  EXPECT_FALSE(adminOnly({"GET", "shards"}));

  UserRights app;
  app.name = "app";
  app.admin = false;
  const std::vector<std::string_view> list = {"CLIENT", "LIST"};
  EXPECT_FALSE(permitted(app, resolve(list), list));
  EXPECT_TRUE(permitted(UserRights{}, resolve(list), list));  // the default user: every right
  EXPECT_EQ(noPermError(resolve(list)),
            "-NOPERM this user has no permissions to run the 'client|list' command\r\n");
  const std::vector<std::string_view> info = {"INFO", "shards"};
  EXPECT_EQ(noPermError(resolve(info)),
            "-NOPERM this user has no permissions to run the 'info' command\r\n");
}

TEST(ClientAuthTest, AttemptsPastTheFreeFailuresAreAnsweredLate) {
  EXPECT_EQ(authDelayMs(0), 0u);
  EXPECT_EQ(authDelayMs(kFreeAuthFailures - 1), 0u);
  EXPECT_EQ(authDelayMs(kFreeAuthFailures), 100u);
  EXPECT_EQ(authDelayMs(kFreeAuthFailures + 1), 200u);
  EXPECT_EQ(authDelayMs(kFreeAuthFailures + 4), 1600u);
  EXPECT_EQ(authDelayMs(kFreeAuthFailures + 5), 2000u);
  EXPECT_EQ(authDelayMs(UINT32_MAX), 2000u);
}

}  // namespace
}  // namespace sp::session
