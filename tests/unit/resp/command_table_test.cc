// Tests proxy/src/resp/command_table.cc: lookups, arity, key extraction (Redis 7 key specs), the
// proxy policy overlaid by tools/gen-command-table.py, and — when redis-server is installed —
// the generated data against a live redis-server 7.0 (COMMAND INFO bytes, COMMAND GETKEYS).
#include "resp/command_table.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace sp::resp {
namespace {

using Args = std::vector<std::string_view>;

const CommandTable& table() { return CommandTable::instance(); }

// Every entry of the table: top-level commands and their subcommands.
std::vector<const CommandInfo*> allEntries() {
  std::vector<const CommandInfo*> out;
  for (const CommandInfo& c : table().commands()) {
    out.push_back(&c);
    for (const CommandInfo& s : c.subcommands) {
      out.push_back(&s);
    }
  }
  return out;
}

const CommandInfo* entry(std::string_view full_name) {
  for (const CommandInfo* c : allEntries()) {
    if (c->name == full_name) {
      return c;
    }
  }
  return nullptr;
}

// End offset of the RESP2 value starting at `pos`, or npos when incomplete or malformed.
size_t respEnd(std::string_view s, size_t pos) {
  if (pos >= s.size()) {
    return std::string_view::npos;
  }
  const size_t eol = s.find("\r\n", pos);
  if (eol == std::string_view::npos) {
    return eol;
  }
  const std::string line(s.substr(pos + 1, eol - pos - 1));
  const size_t next = eol + 2;
  switch (s[pos]) {
    case '+':
    case '-':
    case ':':
      return next;
    case '$': {
      const long n = std::strtol(line.c_str(), nullptr, 10);
      if (n < 0) {
        return next;
      }
      const size_t end = next + static_cast<size_t>(n) + 2;
      if (end > s.size() || s.substr(end - 2, 2) != "\r\n") {
        return std::string_view::npos;
      }
      return end;
    }
    case '*': {
      const long n = std::strtol(line.c_str(), nullptr, 10);
      size_t at = next;
      for (long i = 0; i < n && at != std::string_view::npos; ++i) {
        at = respEnd(s, at);
      }
      return at;
    }
    default:
      return std::string_view::npos;
  }
}

// ---- lookups, arity ----

TEST(CommandTableTest, FindsCommandsInAnyCase) {
  for (std::string_view name : {"get", "GET", "Get", "gEt"}) {
    const CommandInfo* c = table().find(name);
    ASSERT_NE(c, nullptr) << name;
    EXPECT_EQ(c->name, "get");
  }
  ASSERT_NE(table().find("GEORADIUSBYMEMBER_RO"), nullptr);
  EXPECT_EQ(table().find("GEORADIUSBYMEMBER_RO")->name, "georadiusbymember_ro");
  EXPECT_EQ(table().find("restore-asking")->name, "restore-asking");
}

TEST(CommandTableTest, UnknownNamesAreNull) {
  EXPECT_EQ(table().find(""), nullptr);
  EXPECT_EQ(table().find("nosuchcommand"), nullptr);
  EXPECT_EQ(table().find("ge"), nullptr);
  EXPECT_EQ(table().find("gett"), nullptr);
  EXPECT_EQ(table().find(std::string(40, 'g')), nullptr);
  EXPECT_EQ(table().find(std::string(1000, 'x')), nullptr);
  // Subcommands are reached through resolve(), not as top-level names.
  EXPECT_EQ(table().find("object|encoding"), nullptr);
  EXPECT_EQ(table().find(std::string_view("get\0", 4)), nullptr);
}

TEST(CommandTableTest, Arity) {
  const CommandInfo& get = *table().find("get");
  EXPECT_EQ(get.arity, 2);
  EXPECT_FALSE(arityOk(get, 1));
  EXPECT_TRUE(arityOk(get, 2));
  EXPECT_FALSE(arityOk(get, 3));
  const CommandInfo& set = *table().find("set");
  EXPECT_EQ(set.arity, -3);
  EXPECT_FALSE(arityOk(set, 2));
  EXPECT_TRUE(arityOk(set, 3));
  EXPECT_TRUE(arityOk(set, 7));
  const CommandInfo& ping = *table().find("ping");
  EXPECT_TRUE(arityOk(ping, 1));
  EXPECT_TRUE(arityOk(ping, 2));
  EXPECT_FALSE(arityOk(ping, 0));
  EXPECT_TRUE(arityOk(*entry("object|encoding"), 3));
  EXPECT_FALSE(arityOk(*entry("object|encoding"), 4));
}

TEST(CommandTableTest, ResolvesSubcommands) {
  auto resolved = [](Args args) -> std::string_view {
    const CommandInfo* c = table().resolve(args);
    return c == nullptr ? "(null)" : c->name;
  };
  EXPECT_EQ(resolved({"OBJECT", "ENCODING", "k"}), "object|encoding");
  EXPECT_EQ(resolved({"object", "Encoding", "k"}), "object|encoding");
  EXPECT_EQ(resolved({"memory", "USAGE", "k"}), "memory|usage");
  EXPECT_EQ(resolved({"CLIENT", "setname", "n"}), "client|setname");
  EXPECT_EQ(resolved({"xinfo", "stream", "s"}), "xinfo|stream");
  EXPECT_EQ(resolved({"command", "count"}), "command|count");
  // A container without (or with an unknown) subcommand resolves to the container.
  EXPECT_EQ(resolved({"object"}), "object");
  EXPECT_EQ(resolved({"object", "nosuch", "k"}), "object");
  const std::string long_sub(200, 'x');
  EXPECT_EQ(resolved({"client", long_sub}), "client");
  EXPECT_EQ(resolved({"client", ""}), "client");
  // Non-containers ignore args[1].
  EXPECT_EQ(resolved({"get", "encoding"}), "get");
  EXPECT_EQ(resolved({"nosuch", "x"}), "(null)");
  EXPECT_EQ(resolved({}), "(null)");
  EXPECT_TRUE(table().find("object")->has(kCmdContainer));
  EXPECT_FALSE(table().find("get")->has(kCmdContainer));
}

// ---- key extraction ----

struct KeyCase {
  Args args;
  bool ok;
  std::vector<uint32_t> keys;
  bool redis_agrees = true;  // COMMAND GETKEYS on redis-server 7.0 gives the same keys
};

// Key names are distinct from every other argument so that the live check can compare names.
const std::vector<KeyCase>& keyCases() {
  static const std::vector<KeyCase> cases = {
      {{"get", "k"}, true, {1}},
      {{"GET", "k"}, true, {1}},
      {{"set", "k", "v", "EX", "10"}, true, {1}},
      {{"mget", "a", "b", "c"}, true, {1, 2, 3}},
      {{"mset", "a", "1", "b", "2"}, true, {1, 3}},
      {{"mset", "a", "1", "a", "2"}, true, {1, 3}},  // positions, not names, are unique
      {{"del", "a", "b"}, true, {1, 2}},
      {{"exists", "a"}, true, {1}},
      {{"eval", "return 1", "2", "k1", "k2", "argv1"}, true, {3, 4}},
      {{"EVAL", "return 1", "0"}, true, {}},
      {{"eval", "return 1", "0", "argv1"}, true, {}},
      {{"evalsha", "abc", "1", "k", "argv1"}, true, {3}},
      {{"evalsha_ro", "abc", "1", "k"}, true, {3}},
      {{"fcall", "f", "2", "a", "b", "argv1"}, true, {3, 4}},
      {{"fcall_ro", "f", "1", "a"}, true, {3}},
      {{"zunionstore", "d", "2", "a", "b", "WEIGHTS", "1", "2"}, true, {1, 3, 4}},
      {{"zinterstore", "d", "2", "a", "b", "AGGREGATE", "SUM"}, true, {1, 3, 4}},
      {{"xread", "COUNT", "10", "STREAMS", "s1", "s2", "0", "0"}, true, {4, 5}},
      {{"xread", "streams", "s1", "$"}, true, {2}},
      {{"xreadgroup", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "s1", "s2", ">", ">"},
       true,
       {7, 8}},
      {{"georadius", "k", "0", "0", "1", "km"}, true, {1}},
      {{"georadius", "k", "0", "0", "1", "km", "STORE", "d", "STOREDIST", "e"}, true, {1, 7, 9}},
      {{"georadius", "k", "0", "0", "1", "km", "storedist", "e"}, true, {1, 7}},
      {{"sort", "k"}, true, {1}},
      {{"sort", "k", "BY", "w_*", "STORE", "d"}, true, {1, 5}},
      {{"sort", "k", "store", "d1", "STORE", "d2"}, true, {1, 5}},  // the last STORE wins
      {{"sort_ro", "k", "LIMIT", "0", "1"}, true, {1}},
      {{"migrate", "h", "1", "k", "0", "5000"}, true, {3}},
      // Key specs give the "" placeholder too; Redis' migrateGetKeys drops it. MIGRATE is
      // unsupported by the proxy, so this never routes.
      {{"migrate", "h", "1", "", "0", "5000", "KEYS", "k1", "k2"}, true, {3, 7, 8}, false},
      {{"lmpop", "2", "a", "b", "LEFT", "COUNT", "1"}, true, {2, 3}},
      {{"zmpop", "1", "z", "MIN"}, true, {2}},
      {{"bitop", "AND", "d", "a", "b", "c"}, true, {2, 3, 4, 5}},
      {{"object", "encoding", "k"}, true, {2}},
      {{"memory", "usage", "k", "SAMPLES", "5"}, true, {2}},
      {{"blmove", "a", "b", "LEFT", "RIGHT", "0"}, true, {1, 2}},
      {{"blpop", "a", "b", "0"}, true, {1, 2}},
      {{"rename", "a", "b"}, true, {1, 2}},
      {{"smove", "a", "b", "m"}, true, {1, 2}},
      {{"sintercard", "2", "a", "b", "LIMIT", "1"}, true, {2, 3}},
      {{"linsert", "k", "BEFORE", "p", "v"}, true, {1}},
      {{"xinfo", "stream", "s"}, true, {2}},
      {{"zrangestore", "d", "src", "0", "-1"}, true, {1, 2}},
      {{"lcs", "a", "b"}, true, {1, 2}},
      {{"ping"}, true, {}, false},  // keyless (GETKEYS answers with an error)
      // numkeys that does not fit the arguments, is negative or is not a number.
      {{"eval", "return 1", "3", "k1"}, false, {}},
      {{"eval", "return 1", "-1"}, false, {}},
      {{"eval", "return 1", "x", "k1"}, false, {}},
      {{"eval", "return 1", "01", "k1"}, false, {}, false},  // GETKEYS uses atoi(); EVAL refuses
      {{"eval", "return 1", "99999999999999999999", "k1"}, false, {}},
      {{"lmpop", "5", "a", "LEFT"}, false, {}},
      {{"zunionstore", "d", "3", "a", "b"}, false, {}},
      {{"sintercard", "4", "a", "b"}, false, {}},
  };
  return cases;
}

std::string describe(const Args& args) {
  std::string out;
  for (std::string_view a : args) {
    out += (out.empty() ? "" : " ") + std::string(a);
  }
  return out;
}

TEST(CommandTableTest, ExtractsKeys) {
  for (const KeyCase& kc : keyCases()) {
    const CommandInfo* cmd = table().resolve(kc.args);
    ASSERT_NE(cmd, nullptr) << describe(kc.args);
    ASSERT_TRUE(arityOk(*cmd, kc.args.size())) << describe(kc.args);
    std::vector<uint32_t> keys;
    const bool ok = extractKeys(*cmd, kc.args, &keys);
    EXPECT_EQ(ok, kc.ok) << describe(kc.args);
    if (kc.ok) {
      EXPECT_EQ(keys, kc.keys) << describe(kc.args);
    }
  }
}

TEST(CommandTableTest, ExtractKeysAppends) {
  std::vector<uint32_t> keys = {99};
  Args args = {"mget", "a", "b"};
  ASSERT_TRUE(extractKeys(*table().find("mget"), args, &keys));
  EXPECT_EQ(keys, (std::vector<uint32_t>{99, 1, 2}));
}

// ---- the policy overlaid by the generator ----

TEST(CommandTableTest, HasEveryRedis70Command) {
  // redis-server 7.0.15: COMMAND COUNT is 240, with 126 subcommands nested in them; the proxy adds
  // its own PROXY command (kCmdProxy) with 8 subcommands.
  EXPECT_EQ(table().commands().size(), 240u + 1u);
  EXPECT_EQ(allEntries().size(), 240u + 126u + 1u + 8u);
  const std::vector<const CommandInfo*> entries = allEntries();
  EXPECT_EQ(std::count_if(entries.begin(), entries.end(),
                          [](const CommandInfo* c) { return c->has(kCmdProxy); }),
            9);
  std::string_view prev;
  for (const CommandInfo& c : table().commands()) {
    EXPECT_LT(prev, c.name);
    prev = c.name;
    EXPECT_EQ(table().find(c.name), &c);
    EXPECT_EQ(c.has(kCmdContainer), !c.subcommands.empty()) << c.name;
    for (const CommandInfo& s : c.subcommands) {
      EXPECT_EQ(s.name.substr(0, c.name.size() + 1), std::string(c.name) + "|");
      const std::string_view sub = s.name.substr(c.name.size() + 1);
      Args args = {c.name, sub};
      EXPECT_EQ(table().resolve(args), &s) << s.name;
    }
  }
}

TEST(CommandTableTest, SplitCommandsHaveTheirMergeRule) {
  const std::map<std::string_view, std::pair<MergeRule, int>> expected = {
      {"mget", {MergeRule::kArrayInKeyOrder, 1}}, {"mset", {MergeRule::kAllOk, 2}},
      {"del", {MergeRule::kSumIntegers, 1}},      {"unlink", {MergeRule::kSumIntegers, 1}},
      {"exists", {MergeRule::kSumIntegers, 1}},   {"touch", {MergeRule::kSumIntegers, 1}},
  };
  for (const CommandInfo* c : allEntries()) {
    auto it = expected.find(c->name);
    if (it == expected.end()) {
      EXPECT_FALSE(c->has(kCmdSplit)) << c->name;
      if (!c->has(kCmdFanout)) {
        EXPECT_EQ(c->merge, MergeRule::kNone) << c->name;
      }
      continue;
    }
    EXPECT_TRUE(c->has(kCmdSplit)) << c->name;
    EXPECT_EQ(c->merge, it->second.first) << c->name;
    EXPECT_EQ(c->args_per_key, it->second.second) << c->name;
  }
}

TEST(CommandTableTest, LocalCommandsAreExactlyTheListedOnes) {
  const std::set<std::string_view> expected = {"ping",
                                               "echo",
                                               "quit",
                                               "select",
                                               "info",
                                               "command",
                                               "command|count",
                                               "command|info",
                                               "command|docs",
                                               "command|list",
                                               "command|getkeys",
                                               "command|getkeysandflags",
                                               "command|help",
                                               "client",
                                               "client|setname",
                                               "client|getname",
                                               "client|id",
                                               "client|info",
                                               "client|list",
                                               "client|kill",
                                               "client|no-evict",
                                               "config",
                                               "config|get",
                                               "config|help",
                                               "slowlog",
                                               "slowlog|get",
                                               "slowlog|len",
                                               "slowlog|reset",
                                               "slowlog|help",
                                               "proxy",
                                               "proxy|info",
                                               "proxy|shards",
                                               "proxy|slots",
                                               "proxy|config",
                                               "proxy|slowlog",
                                               "proxy|reload",
                                               "proxy|health",
                                               "proxy|help"};
  std::set<std::string_view> local;
  for (const CommandInfo* c : allEntries()) {
    if (c->has(kCmdLocal)) {
      local.insert(c->name);
    }
  }
  EXPECT_EQ(local, expected);
}

TEST(CommandTableTest, ClassesAreConsistent) {
  for (const CommandInfo* c : allEntries()) {
    const int classes = c->has(kCmdLocal) + c->has(kCmdSplit) + c->has(kCmdUnsupported) +
                        c->has(kCmdFanout) + c->has(kCmdSession);
    EXPECT_LE(classes, 1) << c->name;
    // PUBLISH / SPUBLISH route by their channel, as if it were a key.
    const bool channel_key = c->name == "publish" || c->name == "spublish";
    EXPECT_EQ(c->has(kCmdNoKeys), c->key_specs.empty() && c->first_key == 0 && !channel_key)
        << c->name;
    // Keyless commands are answered locally, fanned out, served by the session or refused.
    if (c->has(kCmdNoKeys) && !c->has(kCmdLocal)) {
      EXPECT_TRUE(c->has(kCmdUnsupported) || c->has(kCmdFanout) || c->has(kCmdSession)) << c->name;
    }
    // Fan-out commands say how their replies merge.
    EXPECT_EQ(c->has(kCmdFanout), c->has(kCmdFanout) && c->merge != MergeRule::kNone) << c->name;
    // Pub/sub: subscriptions are the session's, PUBLISH routed, PUBSUB fanned out.
    if (c->has(kCmdPubSub) && !channel_key) {
      EXPECT_TRUE(c->has(kCmdSession) || c->has(kCmdFanout) || c->has(kCmdUnsupported)) << c->name;
    }
  }
  for (std::string_view name :
       {"shutdown",  "debug",        "monitor",       "sync",           "psync",
        "replicaof", "slaveof",      "save",          "bgsave",         "bgrewriteaof",
        "failover",  "cluster",      "cluster|slots", "readonly",       "readwrite",
        "asking",    "acl",          "module",        "script",         "function",
        "swapdb",    "move",         "migrate",       "latency",        "lolwut",
        "memory",    "memory|stats", "object",        "object|help",    "latency|doctor",
        "role",      "replconf",     "pubsub",        "config|rewrite", "wait"}) {
    const CommandInfo* c = entry(name);
    ASSERT_NE(c, nullptr) << name;
    EXPECT_TRUE(c->has(kCmdUnsupported)) << name;
  }
  for (std::string_view name :
       {"multi", "exec", "discard", "watch", "unwatch", "subscribe", "psubscribe", "unsubscribe",
        "punsubscribe", "ssubscribe", "sunsubscribe", "auth", "hello", "reset"}) {
    const CommandInfo* c = entry(name);
    ASSERT_NE(c, nullptr) << name;
    EXPECT_TRUE(c->has(kCmdSession)) << name;
  }
  const std::map<std::string_view, MergeRule> fanout = {
      {"dbsize", MergeRule::kSumIntegers},
      {"keys", MergeRule::kConcatArrays},
      {"scan", MergeRule::kScanCursor},
      {"randomkey", MergeRule::kRandomNonNull},
      {"flushall", MergeRule::kAllOk},
      {"flushdb", MergeRule::kAllOk},
      {"lastsave", MergeRule::kMinInteger},
      {"time", MergeRule::kFirstShard},
      {"script|kill", MergeRule::kAnyOk},
      {"function|kill", MergeRule::kAnyOk},
      {"script|load", MergeRule::kAllEqual},
      {"script|exists", MergeRule::kAndIntegers},
      {"pubsub|numsub", MergeRule::kSumPairs},
      {"pubsub|channels", MergeRule::kUnionArrays},
      {"function|load", MergeRule::kAllEqual},
      {"config|set", MergeRule::kAllOk},
      {"config|resetstat", MergeRule::kAllOk},
      {"latency|latest", MergeRule::kLatestPerEvent},
      {"latency|reset", MergeRule::kSumIntegers},
  };
  for (const auto& [name, rule] : fanout) {
    const CommandInfo* c = entry(name);
    ASSERT_NE(c, nullptr) << name;
    EXPECT_TRUE(c->has(kCmdFanout)) << name;
    EXPECT_EQ(c->merge, rule) << name;
  }
  // Blocking commands are routed by key (on a dedicated connection at run time).
  for (std::string_view name : {"blpop", "brpop", "brpoplpush", "blmove", "blmpop", "bzpopmin",
                                "bzpopmax", "bzmpop", "publish", "spublish"}) {
    const CommandInfo* c = entry(name);
    ASSERT_NE(c, nullptr) << name;
    EXPECT_FALSE(c->has(kCmdUnsupported) || c->has(kCmdLocal) || c->has(kCmdNoKeys)) << name;
  }
  for (std::string_view name : {"get",           "set",
                                "eval",          "evalsha",
                                "eval_ro",       "evalsha_ro",
                                "fcall",         "fcall_ro",
                                "sort",          "sort_ro",
                                "xread",         "xreadgroup",
                                "memory|usage",  "object|encoding",
                                "object|freq",   "xinfo|stream",
                                "xgroup|create", "msetnx",
                                "rename",        "smove"}) {
    const CommandInfo* c = entry(name);
    ASSERT_NE(c, nullptr) << name;
    EXPECT_FALSE(c->has(kCmdUnsupported)) << name;
    EXPECT_FALSE(c->has(kCmdLocal)) << name;
    EXPECT_FALSE(c->has(kCmdNoKeys)) << name;
  }
}

// The session dispatches on CommandInfo::handler: every command the proxy serves itself has one,
// each handler is some command's, and a handler's commands are the ones its code expects.
TEST(CommandTableTest, HandlersNameTheCommandsTheProxyServes) {
  std::vector<std::vector<std::string_view>> by_handler(kHandlerCount);
  for (const CommandInfo* c : allEntries()) {
    by_handler[static_cast<size_t>(c->handler)].push_back(c->name);
    if ((c->has(kCmdLocal) || c->has(kCmdSession)) && !c->has(kCmdContainer)) {
      EXPECT_NE(c->handler, Handler::kNone) << c->name;
    }
    if (c->has(kCmdProxy) && !c->has(kCmdContainer)) {
      EXPECT_TRUE(c->handler >= Handler::kProxyInfo && c->handler <= Handler::kProxyHelp)
          << c->name;
    }
  }
  for (size_t h = 1; h < kHandlerCount; ++h) {
    EXPECT_FALSE(by_handler[h].empty()) << "handler " << h << " serves no command";
  }
  const auto names = [&](Handler h) {
    std::vector<std::string_view> v = by_handler[static_cast<size_t>(h)];
    std::sort(v.begin(), v.end());
    return v;
  };
  using V = std::vector<std::string_view>;
  EXPECT_EQ(names(Handler::kPing), V{"ping"});
  EXPECT_EQ(names(Handler::kExec), V{"exec"});
  EXPECT_EQ(names(Handler::kUnwatch), V{"unwatch"});
  EXPECT_EQ(names(Handler::kSUnsubscribe), V{"sunsubscribe"});
  EXPECT_EQ(names(Handler::kPublish), (V{"publish", "spublish"}));
  EXPECT_EQ(names(Handler::kListMpop), (V{"blmpop", "lmpop"}));
  EXPECT_EQ(names(Handler::kZsetMpop), (V{"bzmpop", "zmpop"}));
  EXPECT_EQ(names(Handler::kEval), V{"eval"});
  EXPECT_EQ(names(Handler::kEvalRo), V{"eval_ro"});
  EXPECT_EQ(names(Handler::kXread), (V{"xread", "xreadgroup"}));
  EXPECT_EQ(names(Handler::kClientTracking), (V{"client|caching", "client|tracking"}));
  EXPECT_EQ(names(Handler::kSlowlog), (V{"slowlog|get", "slowlog|len", "slowlog|reset"}));
  EXPECT_EQ(names(Handler::kConfigSet), V{"config|set"});
  EXPECT_EQ(names(Handler::kCommandGetKeysAndFlags), V{"command|getkeysandflags"});
  EXPECT_EQ(table().resolve(Args{"CONFIG", "resetstat"})->handler, Handler::kConfigResetStat);
  EXPECT_EQ(table().find("GET")->handler, Handler::kNone);
}

TEST(CommandTableTest, AdminOnlyCommandsAreFlagged) {
  std::set<std::string_view> admin_only;
  for (const CommandInfo* c : allEntries()) {
    if (c->has(kCmdAdminOnly)) {
      admin_only.insert(c->name);
    }
  }
  const std::set<std::string_view> expected = {
      "flushall",    "flushdb",      "keys",           "config|set",      "client|kill",
      "client|list", "script|flush", "function|flush", "function|delete", "function|restore"};
  EXPECT_EQ(admin_only, expected);
}

TEST(CommandTableTest, RedisFlagsAreMapped) {
  EXPECT_TRUE(table().find("set")->has(kCmdWrite));
  EXPECT_FALSE(table().find("set")->has(kCmdReadOnly));
  EXPECT_TRUE(table().find("get")->has(kCmdReadOnly));
  EXPECT_TRUE(table().find("blpop")->has(kCmdBlocking));
  EXPECT_TRUE(table().find("xread")->has(kCmdBlocking));
  EXPECT_TRUE(table().find("xread")->has(kCmdMovableKeys));
  EXPECT_TRUE(table().find("eval")->has(kCmdMovableKeys));
  EXPECT_TRUE(table().find("subscribe")->has(kCmdPubSub));
  EXPECT_TRUE(table().find("shutdown")->has(kCmdAdmin));
  EXPECT_TRUE(table().find("ping")->has(kCmdNoKeys));
  EXPECT_EQ(table().find("mset")->first_key, 1);
  EXPECT_EQ(table().find("mset")->last_key, -1);
  EXPECT_EQ(table().find("mset")->key_step, 2);
}

TEST(CommandTableTest, CommandSetFindsNamedCommandsAndSubcommands) {
  const CommandTable& t = CommandTable::instance();
  const std::vector<std::string> names = {"eval", "FCALL", "function load", "script|kill",
                                          "nosuch"};
  const CommandSet set(names);
  EXPECT_TRUE(set.contains(t.find("eval")));
  EXPECT_TRUE(set.contains(t.find("fcall")));
  EXPECT_FALSE(set.contains(t.find("get")));
  EXPECT_FALSE(set.contains(t.find("function")));  // the container is not its subcommands
  const std::string_view load[] = {"FUNCTION", "LOAD"};
  const std::string_view kill[] = {"script", "kill"};
  const std::string_view flush[] = {"script", "flush"};
  EXPECT_TRUE(set.contains(t.resolve(load)));
  EXPECT_TRUE(set.contains(t.resolve(kill)));
  EXPECT_FALSE(set.contains(t.resolve(flush)));
  EXPECT_FALSE(set.contains(nullptr));  // an unknown command
  EXPECT_FALSE(CommandSet().contains(t.find("eval")));
}

TEST(CommandTableTest, InfoAndDocsAreValidResp) {
  for (const CommandInfo* c : allEntries()) {
    // COMMAND INFO entries of redis 7.0 have 10 elements, the name first.
    const std::string name_bulk =
        "$" + std::to_string(c->name.size()) + "\r\n" + std::string(c->name) + "\r\n";
    EXPECT_EQ(c->info_resp.substr(0, 5), "*10\r\n") << c->name;
    EXPECT_EQ(c->info_resp.substr(5, name_bulk.size()), name_bulk) << c->name;
    EXPECT_EQ(respEnd(c->info_resp, 0), c->info_resp.size()) << c->name;
    // COMMAND DOCS: the name, then a map (a flat array in RESP2) of summary/since/group/....
    ASSERT_EQ(c->docs_resp.substr(0, name_bulk.size()), name_bulk) << c->name;
    const size_t map_at = name_bulk.size();
    EXPECT_EQ(c->docs_resp[map_at], '*') << c->name;
    EXPECT_EQ(respEnd(c->docs_resp, map_at), c->docs_resp.size()) << c->name;
    EXPECT_NE(c->docs_resp.find("$7\r\nsummary\r\n"), std::string_view::npos) << c->name;
  }
  const std::string_view get = table().find("get")->info_resp;
  const std::string_view get_head = "*10\r\n$3\r\nget\r\n:2\r\n*2\r\n+readonly\r\n+fast\r\n:1\r\n";
  EXPECT_EQ(get.substr(0, get_head.size()), get_head);
}

TEST(CommandTableTest, SubcommandInfoIsNestedInTheContainers) {
  for (const CommandInfo& c : table().commands()) {
    if (c.subcommands.empty()) {
      EXPECT_TRUE(c.info_resp.ends_with("*0\r\n")) << c.name;
      continue;
    }
    // The container's last element is the array of its subcommands' entries, in name order.
    std::string nested = "*" + std::to_string(c.subcommands.size()) + "\r\n";
    for (const CommandInfo& s : c.subcommands) {
      nested += s.info_resp;
    }
    EXPECT_TRUE(c.info_resp.ends_with(nested)) << c.name;
  }
}

// ---- against a live redis-server 7.0, when one is installed ----

class LiveRedis {
 public:
  LiveRedis() {
    char dir_template[] = "/tmp/command-table-test-XXXXXX";
    if (mkdtemp(dir_template) == nullptr) {
      return;
    }
    dir_ = dir_template;
    const uint16_t port = freePort();
    pid_ = fork();
    if (pid_ == 0) {
      const std::string port_s = std::to_string(port);
      const std::string log = dir_ + "/redis.log";
      execl(SP_REDIS_SERVER, SP_REDIS_SERVER, "--port", port_s.c_str(), "--bind", "127.0.0.1",
            "--save", "", "--appendonly", "no", "--dir", dir_.c_str(), "--logfile", log.c_str(),
            static_cast<char*>(nullptr));
      _exit(127);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (fd_ < 0 && std::chrono::steady_clock::now() < deadline) {
      const int fd = socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_port = htons(port);
      addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
        fd_ = fd;
      } else {
        close(fd);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    }
  }

  ~LiveRedis() {
    if (fd_ >= 0) {
      close(fd_);
    }
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      int status = 0;
      waitpid(pid_, &status, 0);
    }
    if (!dir_.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(dir_, ec);
    }
  }

  bool ok() const { return fd_ >= 0; }

  // Sends one command, returns its whole reply.
  std::string call(const std::vector<std::string_view>& args) {
    std::string req = "*" + std::to_string(args.size()) + "\r\n";
    for (std::string_view a : args) {
      req += "$" + std::to_string(a.size()) + "\r\n" + std::string(a) + "\r\n";
    }
    if (send(fd_, req.data(), req.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(req.size())) {
      return {};
    }
    std::string reply;
    char buf[65536];
    while (respEnd(reply, 0) != reply.size()) {
      const ssize_t n = recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) {
        return {};
      }
      reply.append(buf, static_cast<size_t>(n));
    }
    return reply;
  }

 private:
  static uint16_t freePort() {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    socklen_t len = sizeof addr;
    getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    close(fd);
    return ntohs(addr.sin_port);
  }

  std::string dir_;
  pid_t pid_ = -1;
  int fd_ = -1;
};

// The elements of a flat RESP2 array of bulk/simple strings.
std::vector<std::string> stringElements(std::string_view reply) {
  std::vector<std::string> out;
  if (reply.empty() || reply[0] != '*') {
    return out;
  }
  size_t at = reply.find("\r\n") + 2;
  while (at < reply.size()) {
    const size_t end = respEnd(reply, at);
    if (end == std::string_view::npos) {
      break;
    }
    const std::string_view el = reply.substr(at, end - at);
    const size_t body = el.find("\r\n") + 2;
    out.emplace_back(el[0] == '$' ? el.substr(body, el.size() - body - 2) : el.substr(1, body - 3));
    at = end;
  }
  return out;
}

TEST(CommandTableTest, MatchesLiveRedisServer) {
  if (access(SP_REDIS_SERVER, X_OK) != 0) {
    GTEST_SKIP() << SP_REDIS_SERVER << " is not installed";
  }
  LiveRedis redis;
  ASSERT_TRUE(redis.ok());
  const std::string info = redis.call({"INFO", "server"});
  if (info.find("redis_version:7.0.") == std::string::npos) {
    GTEST_SKIP() << "the table is generated from redis 7.0";
  }
  // The proxy's own PROXY entries (kCmdProxy) are not the server's.
  const std::vector<const CommandInfo*> entries = allEntries();
  const auto proxy_entries = std::count_if(entries.begin(), entries.end(),
                                           [](const CommandInfo* c) { return c->has(kCmdProxy); });
  const auto proxy_top = std::count_if(table().commands().begin(), table().commands().end(),
                                       [](const CommandInfo& c) { return c.has(kCmdProxy); });
  EXPECT_EQ(
      redis.call({"COMMAND", "COUNT"}),
      ":" + std::to_string(table().commands().size() - static_cast<size_t>(proxy_top)) + "\r\n");
  // COMMAND LIST names every command and subcommand ("object|encoding").
  const std::vector<std::string> names = stringElements(redis.call({"COMMAND", "LIST"}));
  EXPECT_EQ(names.size(), entries.size() - static_cast<size_t>(proxy_entries));
  for (const std::string& name : names) {
    const size_t bar = name.find('|');
    const std::string_view n = name;
    const CommandInfo* c = bar == std::string::npos
                               ? table().find(n)
                               : table().resolve(Args{n.substr(0, bar), n.substr(bar + 1)});
    ASSERT_NE(c, nullptr) << name;
    EXPECT_EQ(c->name, name);
  }
  // Every entry's COMMAND INFO bytes are the server's, but for the order of a container's
  // subcommands (redis-server varies it from run to run; the generator sorts them).
  for (const CommandInfo* c : allEntries()) {
    if (c->has(kCmdProxy)) {
      continue;  // not a redis-server command
    }
    const std::string reply = redis.call({"COMMAND", "INFO", c->name});
    if (c->subcommands.empty()) {
      EXPECT_EQ(reply, "*1\r\n" + std::string(c->info_resp)) << c->name;
    } else {
      EXPECT_EQ(reply.size(), 4 + c->info_resp.size()) << c->name;
      const size_t nested_at =
          static_cast<size_t>(c->subcommands[0].info_resp.data() - c->info_resp.data());
      EXPECT_TRUE(reply.starts_with("*1\r\n" + std::string(c->info_resp.substr(0, nested_at))))
          << c->name;
      for (const CommandInfo& s : c->subcommands) {
        EXPECT_NE(reply.find(s.info_resp), std::string::npos) << s.name;
      }
    }
    const std::string docs = redis.call({"COMMAND", "DOCS", c->name});
    const std::string_view name_and_map = c->docs_resp;
    const size_t map_at = name_and_map.find("\r\n*") + 2;
    EXPECT_EQ(docs.substr(0, 4 + map_at), "*2\r\n" + std::string(name_and_map.substr(0, map_at)))
        << c->name;
    size_t at = name_and_map.find("\r\n", map_at) + 2;
    while (at < name_and_map.size()) {
      const size_t value_at = respEnd(name_and_map, at);
      const size_t end = respEnd(name_and_map, value_at);
      ASSERT_NE(end, std::string_view::npos);
      if (name_and_map.substr(at, value_at - at) == "$11\r\nsubcommands\r\n") {
        // A container's subcommand docs: in name order here, in the server's dict order (random
        // per process) there; each entry is the server's.
        for (const CommandInfo& s : c->subcommands) {
          EXPECT_NE(docs.find(s.docs_resp), std::string::npos) << s.name;
        }
      } else {
        EXPECT_NE(docs.find(name_and_map.substr(at, end - at)), std::string::npos) << c->name;
      }
      at = end;
    }
  }
  // Key extraction agrees with COMMAND GETKEYS.
  for (const KeyCase& kc : keyCases()) {
    if (!kc.redis_agrees) {
      continue;
    }
    std::vector<std::string_view> req = {"COMMAND", "GETKEYS"};
    req.insert(req.end(), kc.args.begin(), kc.args.end());
    const std::string reply = redis.call(req);
    std::vector<std::string> expected;
    for (uint32_t k : kc.keys) {
      expected.emplace_back(kc.args[k]);
    }
    if (!kc.ok || kc.keys.empty()) {
      // Redis answers an empty array or an error where the proxy finds no (valid) keys.
      EXPECT_TRUE(reply == "*0\r\n" || reply.starts_with("-"))
          << describe(kc.args) << ": " << reply;
    } else {
      EXPECT_EQ(stringElements(reply), expected) << describe(kc.args);
    }
  }
}

}  // namespace
}  // namespace sp::resp
