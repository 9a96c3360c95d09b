// COMMAND and its subcommands (session/command_introspection.h), called directly: COUNT, INFO and
// DOCS for named and unknown commands, LIST with its filters, GETKEYS and GETKEYSANDFLAGS with
// redis-server 7.0's refusals and key flags (a set for a RESP3 client), and HELP. Expected bytes
// are what redis-server 7.0.15 sends for the same request.
#include "session/command_introspection.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "fakes/reply_tree.h"
#include "resp/command_table.h"

namespace sp::session {
namespace {

// The table entry of "command" or of one of its subcommands ("command|getkeys").
const resp::CommandInfo& entry(std::string_view full_name) {
  const resp::CommandInfo* top = resp::CommandTable::instance().find("command");
  if (full_name == "command") {
    return *top;
  }
  for (const resp::CommandInfo& sub : top->subcommands) {
    if (sub.name == full_name) {
      return sub;
    }
  }
  ADD_FAILURE() << "no entry " << full_name;
  return *top;
}

// The reply to `args` ("COMMAND", "GETKEYS", ...), served by the entry `full_name`.
std::string ask(std::string_view full_name, std::vector<std::string_view> args,
                bool resp3 = false) {
  std::string reply;
  commandIntrospection(entry(full_name), args, resp3, &reply);
  return reply;
}

// The bulk strings of an array reply, sorted (LIST's order is not redis-server's).
std::vector<std::string> sortedNames(const std::string& reply) {
  fakes::Reply tree;
  size_t used = 0;
  EXPECT_EQ(fakes::parseReply(reply, &used, &tree), 1) << reply;
  EXPECT_EQ(used, reply.size());
  std::vector<std::string> names;
  for (const fakes::Reply& e : tree.elems) {
    names.push_back(e.str);
  }
  std::sort(names.begin(), names.end());
  return names;
}

TEST(CommandIntrospectionTest, CountIsRedisServersNumberOfCommands) {
  EXPECT_EQ(ask("command|count", {"COMMAND", "COUNT"}), ":240\r\n");
}

TEST(CommandIntrospectionTest, InfoAnswersNilForAnUnknownNameInItsPlace) {
  const std::string reply = ask("command|info", {"COMMAND", "INFO", "get", "nosuch", "GET"});
  fakes::Reply tree;
  size_t used = 0;
  ASSERT_EQ(fakes::parseReply(reply, &used, &tree), 1);
  ASSERT_EQ(tree.elems.size(), 3u);
  ASSERT_EQ(tree.elems[0].elems.size(), 10u);  // redis 7's ten fields
  EXPECT_EQ(tree.elems[0].elems[0].str, "get");
  EXPECT_EQ(tree.elems[0].elems[1].num, 2);  // arity
  EXPECT_TRUE(tree.elems[1].matches(fakes::Reply::nullBulk()));
  EXPECT_EQ(tree.elems[2].elems[0].str, "get");  // names are found in any case
}

TEST(CommandIntrospectionTest, InfoFindsASubcommandByItsFullName) {
  const std::string reply = ask("command|info", {"COMMAND", "INFO", "config|get", "config|nosuch"});
  fakes::Reply tree;
  size_t used = 0;
  ASSERT_EQ(fakes::parseReply(reply, &used, &tree), 1);
  ASSERT_EQ(tree.elems.size(), 2u);
  ASSERT_FALSE(tree.elems[0].elems.empty());
  EXPECT_EQ(tree.elems[0].elems[0].str, "config|get");
  EXPECT_TRUE(tree.elems[1].matches(fakes::Reply::nullBulk()));
}

TEST(CommandIntrospectionTest, DocsOfUnknownNamesIsAnEmptyMap) {
  EXPECT_EQ(ask("command|docs", {"COMMAND", "DOCS", "nosuch"}), "*0\r\n");
  const std::string reply = ask("command|docs", {"COMMAND", "DOCS", "get", "nosuch"});
  fakes::Reply tree;
  size_t used = 0;
  ASSERT_EQ(fakes::parseReply(reply, &used, &tree), 1);
  ASSERT_EQ(tree.elems.size(), 2u);  // name, docs: the unknown name is left out
  EXPECT_EQ(tree.elems[0].str, "get");
}

TEST(CommandIntrospectionTest, ListFiltersByPatternIncludingSubcommands) {
  EXPECT_EQ(ask("command|list", {"COMMAND", "LIST", "FILTERBY", "PATTERN", "xrev*"}),
            "*1\r\n$9\r\nxrevrange\r\n");
  EXPECT_EQ(
      sortedNames(ask("command|list", {"COMMAND", "LIST", "FILTERBY", "PATTERN", "config|*"})),
      (std::vector<std::string>{"config|get", "config|help", "config|resetstat", "config|rewrite",
                                "config|set"}));
}

TEST(CommandIntrospectionTest, ListFiltersByAclCategoryAndModule) {
  EXPECT_EQ(
      sortedNames(ask("command|list", {"COMMAND", "LIST", "FILTERBY", "ACLCAT", "hyperloglog"})),
      (std::vector<std::string>{"pfadd", "pfcount", "pfdebug", "pfmerge", "pfselftest"}));
  EXPECT_EQ(ask("command|list", {"COMMAND", "LIST", "FILTERBY", "MODULE", "x"}), "*0\r\n");
}

TEST(CommandIntrospectionTest, ListWithAnUnknownFilterIsASyntaxError) {
  EXPECT_EQ(ask("command|list", {"COMMAND", "LIST", "bogus"}), "-ERR syntax error\r\n");
  EXPECT_EQ(ask("command|list", {"COMMAND", "LIST", "FILTERBY", "COLOUR", "x"}),
            "-ERR syntax error\r\n");
}

TEST(CommandIntrospectionTest, ListWithoutFilterHoldsNoneOfTheProxysOwnCommands) {
  const std::vector<std::string> names = sortedNames(ask("command|list", {"COMMAND", "LIST"}));
  EXPECT_TRUE(std::binary_search(names.begin(), names.end(), "get"));
  EXPECT_TRUE(std::binary_search(names.begin(), names.end(), "client|kill"));
  EXPECT_FALSE(std::binary_search(names.begin(), names.end(), "proxy"));
}

TEST(CommandIntrospectionTest, GetKeysRefusesAsRedisServerDoes) {
  EXPECT_EQ(ask("command|getkeys", {"COMMAND", "GETKEYS", "nosuch", "x"}),
            "-ERR Invalid command specified\r\n");
  EXPECT_EQ(ask("command|getkeys", {"COMMAND", "GETKEYS", "ping", "x"}),
            "-ERR The command has no key arguments\r\n");
  EXPECT_EQ(ask("command|getkeys", {"COMMAND", "GETKEYS", "GET", "a", "b"}),
            "-ERR Invalid number of arguments specified for command\r\n");
}

TEST(CommandIntrospectionTest, GetKeysNamesTheKeysOfSpecsAndKeyCounts) {
  EXPECT_EQ(ask("command|getkeys", {"COMMAND", "GETKEYS", "MSET", "a", "1", "b", "2"}),
            "*2\r\n$1\r\na\r\n$1\r\nb\r\n");
  EXPECT_EQ(ask("command|getkeys", {"COMMAND", "GETKEYS", "ZUNIONSTORE", "d", "2", "a", "b"}),
            "*3\r\n$1\r\nd\r\n$1\r\na\r\n$1\r\nb\r\n");
  // EVAL may have no keys (no-mandatory-keys): an empty list, not an error.
  EXPECT_EQ(ask("command|getkeys", {"COMMAND", "GETKEYS", "EVAL", "s", "0"}), "*0\r\n");
}

TEST(CommandIntrospectionTest, GetKeysAndFlagsFollowsSetsGetOption) {
  EXPECT_EQ(ask("command|getkeysandflags", {"COMMAND", "GETKEYSANDFLAGS", "SET", "k", "v", "GET"}),
            "*1\r\n*2\r\n$1\r\nk\r\n*3\r\n+RW\r\n+access\r\n+update\r\n");
  EXPECT_EQ(ask("command|getkeysandflags", {"COMMAND", "GETKEYSANDFLAGS", "SET", "k", "v"}),
            "*1\r\n*2\r\n$1\r\nk\r\n*2\r\n+OW\r\n+update\r\n");
}

TEST(CommandIntrospectionTest, GetKeysAndFlagsAreASetForAResp3Client) {
  EXPECT_EQ(ask("command|getkeysandflags",
                {"COMMAND", "GETKEYSANDFLAGS", "LMOVE", "a", "b", "LEFT", "RIGHT"}, true),
            "*2\r\n*2\r\n$1\r\na\r\n~3\r\n+RW\r\n+access\r\n+delete\r\n"
            "*2\r\n$1\r\nb\r\n~2\r\n+RW\r\n+insert\r\n");
}

TEST(CommandIntrospectionTest, HelpStartsWithRedisServersUsageLine) {
  const std::string reply = ask("command|help", {"COMMAND", "HELP"});
  EXPECT_TRUE(reply.starts_with(
      "*21\r\n+COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n"))
      << reply.substr(0, 80);
  EXPECT_TRUE(reply.ends_with("+HELP\r\n+    Prints this help.\r\n"));
}

}  // namespace
}  // namespace sp::session
