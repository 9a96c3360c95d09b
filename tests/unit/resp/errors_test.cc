// The error catalogue: every reply is one well-formed error line, redis-server's texts are its
// words exactly, and the proxy's shard-unavailable error has its words.
#include "resp/errors.h"

#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

namespace sp::resp::err {
namespace {

bool oneErrorLine(std::string_view reply) {
  return reply.size() > 3 && reply.front() == '-' && reply.ends_with("\r\n") &&
         reply.find_first_of("\r\n") == reply.size() - 2;
}

TEST(ErrorsTest, EveryReplyIsOneErrorLine) {
  const std::string_view constants[] = {kSyntax,
                                        kNotInteger,
                                        kCrossSlot,
                                        kInvalidCursor,
                                        kMaxClients,
                                        kNoAuth,
                                        kWrongPass,
                                        kAuthWithoutPassword,
                                        kHelloNeedsAuth,
                                        kNoProto,
                                        kProtocolVersion,
                                        kMultiNested,
                                        kWatchInMulti,
                                        kNotInTransaction,
                                        kExecWithoutMulti,
                                        kDiscardWithoutMulti,
                                        kExecAbortPrevious,
                                        kClientName,
                                        kNoSuchClient,
                                        kInvalidClientId,
                                        kClientIdPositive,
                                        kSlowlogCount,
                                        kInvalidCommand,
                                        kNoKeyArguments,
                                        kInvalidArgumentCount,
                                        kInvalidArguments,
                                        kShuttingDown,
                                        kConfigSetDisabled,
                                        kKeylessScript,
                                        kSelectOtherDatabase,
                                        kUnexpectedFanoutReply,
                                        kUnexpectedSplitReply,
                                        kShortSplitReply,
                                        kShardsDiffer,
                                        kScanCursorTooLarge,
                                        kReloadUnavailable};
  for (std::string_view c : constants) {
    EXPECT_TRUE(oneErrorLine(c)) << c;
  }
  const std::array<std::string_view, 3> args = {"nosuch", "a", "b"};
  const std::vector<std::string> built = {helloOption("x"),
                                          unknownCommand(args),
                                          unknownSubcommand("object", "x"),
                                          wrongArity("get"),
                                          wrongArity("exec"),
                                          noPermission("config|set"),
                                          notInSubscriberContext("get"),
                                          protocolError("invalid bulk length"),
                                          unknownClientType("x"),
                                          unrecognizedOption("x"),
                                          noSuchUser("x"),
                                          configSetFailed("x", "why"),
                                          shardUnavailable("shard0 (127.0.0.1:1)", "timeout"),
                                          execAbortShardUnavailable("shard0", "why"),
                                          notSupported("wait"),
                                          notSupported("client|tracking", "why"),
                                          disabledByConfig("config|set"),
                                          spansEveryShard("dbsize"),
                                          reloadFailed("why"),
                                          proxyConfigOnlyGet("SET"),
                                          proxySlowlogUsage("x")};
  for (const std::string& b : built) {
    EXPECT_TRUE(oneErrorLine(b)) << b;
  }
}

TEST(ErrorsTest, RedisServersWords) {
  const std::array<std::string_view, 3> args = {"nosuch", "a", "b"};
  EXPECT_EQ(unknownCommand(args),
            "-ERR unknown command 'nosuch', with args beginning with: 'a' 'b' \r\n");
  const std::array<std::string_view, 1> alone = {"nosuch"};
  EXPECT_EQ(unknownCommand(alone), "-ERR unknown command 'nosuch', with args beginning with: \r\n");
  EXPECT_EQ(unknownSubcommand("xinfo", "nope"),
            "-ERR unknown subcommand 'nope'. Try XINFO HELP.\r\n");
  EXPECT_EQ(wrongArity("get"), "-ERR wrong number of arguments for 'get' command\r\n");
  EXPECT_EQ(wrongArity("config|get"),
            "-ERR wrong number of arguments for 'config|get' command\r\n");
  EXPECT_EQ(wrongArity("exec"),
            "-EXECABORT Transaction discarded because of: wrong number of arguments for 'exec' "
            "command\r\n");
  EXPECT_EQ(noPermission("client|list"),
            "-NOPERM this user has no permissions to run the 'client|list' command\r\n");
  // redis-server quotes at most 128 bytes of a client's argument.
  const std::string long_name(300, 'x');
  EXPECT_EQ(unknownSubcommand("object", long_name),
            "-ERR unknown subcommand '" + std::string(128, 'x') + "'. Try OBJECT HELP.\r\n");
}

TEST(ErrorsTest, TheProxysOwnNameCommandsWithSpaces) {
  EXPECT_EQ(notSupported("wait"), "-ERR command 'wait' is not supported by shardproxy\r\n");
  EXPECT_EQ(notSupported("client|tracking", "a reason"),
            "-ERR command 'client tracking' is not supported by shardproxy: a reason\r\n");
  EXPECT_EQ(disabledByConfig("config|set"),
            "-ERR command 'config set' is disabled by the shardproxy configuration "
            "(deny_commands)\r\n");
}

TEST(ErrorsTest, ShardUnavailableWords) {
  EXPECT_EQ(shardUnavailable("shard1 (127.0.0.1:7001)", "timeout after 3000 ms"),
            "-ERR shard shard1 (127.0.0.1:7001) unavailable: timeout after 3000 ms\r\n");
  EXPECT_EQ(execAbortShardUnavailable("shard1", "why"),
            "-EXECABORT Transaction discarded: shard shard1 unavailable: why\r\n");
}

}  // namespace
}  // namespace sp::resp::err
