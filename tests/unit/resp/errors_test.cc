// The error catalogue: every reply is one well-formed error line, redis-server's texts are its
// words exactly, each of the proxy's own errors carries its kind, and the shard-unavailable error
// has its words.
#include "resp/errors.h"

#include <gtest/gtest.h>

#include <array>
#include <set>
#include <string>
#include <vector>

namespace sp::resp::err {
namespace {

bool oneErrorLine(std::string_view reply) {
  return reply.size() > 3 && reply.front() == '-' && reply.ends_with("\r\n") &&
         reply.find_first_of("\r\n") == reply.size() - 2;
}

TEST(ErrorsTest, EveryReplyIsOneErrorLine) {
  const std::string_view constants[] = {
      kSyntax,           kNotInteger,       kInvalidCursor,       kMaxClients,
      kNoAuth,           kWrongPass,        kAuthWithoutPassword, kHelloNeedsAuth,
      kNoProto,          kProtocolVersion,  kMultiNested,         kWatchInMulti,
      kNotInTransaction, kExecWithoutMulti, kDiscardWithoutMulti, kExecAbortPrevious,
      kClientName,       kNoSuchClient,     kInvalidClientId,     kClientIdPositive,
      kSlowlogCount,     kInvalidCommand,   kNoKeyArguments,      kInvalidArgumentCount,
      kInvalidArguments, kReloadUnavailable};
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
                                          reloadFailed("why"),
                                          proxyConfigOnlyGet("SET"),
                                          proxySlowlogUsage("x")};
  for (const std::string& b : built) {
    EXPECT_TRUE(oneErrorLine(b)) << b;
  }
}

// The catalogue: each of the proxy's own errors carries the kind that its comment names, and
// every kind has a distinct metric label.
TEST(ErrorsTest, EveryOwnErrorCarriesItsKind) {
  const std::vector<std::pair<ErrorReply, ProxyError>> own = {
      {kCrossSlot, ProxyError::kCrossSlot},
      {kCrossShard, ProxyError::kCrossSlot},
      {kShuttingDown, ProxyError::kShuttingDown},
      {kConfigSetDisabled, ProxyError::kDisabled},
      {kKeylessScript, ProxyError::kKeylessScript},
      {kSelectOtherDatabase, ProxyError::kNotSupported},
      {kUnexpectedFanoutReply, ProxyError::kUnmergeable},
      {kUnexpectedSplitReply, ProxyError::kUnmergeable},
      {kShortSplitReply, ProxyError::kUnmergeable},
      {kShardsDiffer, ProxyError::kUnmergeable},
      {kScanCursorTooLarge, ProxyError::kUnmergeable},
      {execAbortShardUnavailable("shard0", "why"), ProxyError::kShardUnavailable},
      {notSupported("wait"), ProxyError::kNotSupported},
      {notSupported("client|tracking", "why"), ProxyError::kNotSupported},
      {disabledByConfig("config|set"), ProxyError::kDisabled},
      {spansEveryShard("dbsize"), ProxyError::kSpansEveryShard},
      {noReply("slowlog|get"), ProxyError::kNoReply}};
  for (const auto& [error, kind] : own) {
    EXPECT_TRUE(oneErrorLine(error.text())) << error.text();
    EXPECT_EQ(error.kind(), kind) << error.text();
  }
  // redis-server's words are no kind of the proxy's.
  EXPECT_EQ(ErrorReply(kSyntax).kind(), ProxyError::kNone);
  EXPECT_EQ(ErrorReply(wrongArity("get")).kind(), ProxyError::kNone);
  EXPECT_TRUE(ErrorReply().empty());
  std::set<std::string_view> labels;
  for (size_t k = 0; k < kProxyErrors; ++k) {
    const std::string_view name = label(static_cast<ProxyError>(k));
    EXPECT_FALSE(name.empty());
    EXPECT_EQ(name.find_first_not_of("abcdefghijklmnopqrstuvwxyz_"), std::string_view::npos)
        << name;
    labels.insert(name);
  }
  EXPECT_EQ(labels.size(), kProxyErrors);
  EXPECT_EQ(label(ProxyError::kShardUnavailable), "shard_unavailable");
  EXPECT_EQ(label(ProxyError::kNoReply), "no_reply");
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
  EXPECT_EQ(notSupported("wait").text(), "-ERR command 'wait' is not supported by shardproxy\r\n");
  EXPECT_EQ(notSupported("client|tracking", "a reason").text(),
            "-ERR command 'client tracking' is not supported by shardproxy: a reason\r\n");
  EXPECT_EQ(disabledByConfig("config|set").text(),
            "-ERR command 'config set' is disabled by the shardproxy configuration "
            "(deny_commands)\r\n");
}

TEST(ErrorsTest, ShardUnavailableWords) {
  EXPECT_EQ(shardUnavailable("shard1 (127.0.0.1:7001)", "timeout after 3000 ms"),
            "-ERR shard shard1 (127.0.0.1:7001) unavailable: timeout after 3000 ms\r\n");
  EXPECT_EQ(execAbortShardUnavailable("shard1", "why").text(),
            "-EXECABORT Transaction discarded: shard shard1 unavailable: why\r\n");
}

}  // namespace
}  // namespace sp::resp::err
