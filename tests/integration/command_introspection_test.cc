// COMMAND introspection through the proxy, byte for byte against a redis-server of its own, in
// RESP2 and RESP3: COMMAND, COUNT, LIST [FILTERBY ...], INFO, DOCS, HELP, GETKEYS and
// GETKEYSANDFLAGS, with their errors and junk arguments, and a sweep of GETKEYS over every
// command. redis-server lists its commands (and a container's subcommands) in a hash order that
// is random per process, so whole lists are compared with those levels sorted; everything else
// must be the same bytes. The proxy's own PROXY command stays out of the lists (docs/commands.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "integration/harness.h"

namespace sp::test {
namespace {

using namespace std::chrono_literals;
using Argv = std::vector<std::string>;

// A parsed reply: the type byte and header line, the payload of a blob, the elements of an
// aggregate (a map's keys and values alternate).
struct Node {
  std::string head;  // e.g. "*10\r\n", "$3\r\n", "+OK\r\n"
  std::string blob;  // a blob's payload and CRLF
  std::vector<Node> kids;

  std::string bytes() const {
    std::string out = head + blob;
    for (const Node& k : kids) {
      out += k.bytes();
    }
    return out;
  }
  std::string text() const { return blob.size() >= 2 ? blob.substr(0, blob.size() - 2) : ""; }
};

// Parses one reply at `pos`; returns the offset after it, or npos when incomplete.
size_t parse(std::string_view in, size_t pos, Node* node) {
  const size_t eol = in.find("\r\n", pos);
  if (eol == std::string_view::npos) {
    return std::string_view::npos;
  }
  node->head = std::string(in.substr(pos, eol + 2 - pos));
  const char type = in[pos];
  const long long n = std::atoll(std::string(in.substr(pos + 1, eol - pos - 1)).c_str());
  size_t next = eol + 2;
  if (type == '$' || type == '=' || type == '!') {
    if (n < 0) {
      return next;
    }
    if (in.size() < next + static_cast<size_t>(n) + 2) {
      return std::string_view::npos;
    }
    node->blob = std::string(in.substr(next, static_cast<size_t>(n) + 2));
    return next + static_cast<size_t>(n) + 2;
  }
  if (type == '*' || type == '~' || type == '%' || type == '>') {
    const long long count = type == '%' ? 2 * n : n;
    for (long long i = 0; i < count; ++i) {
      node->kids.emplace_back();
      next = parse(in, next, &node->kids.back());
      if (next == std::string_view::npos) {
        return next;
      }
    }
  }
  return next;
}

// The levels redis-server orders by hash, sorted: a COMMAND INFO entry's subcommand entries
// (element 9), a COMMAND DOCS map's "subcommands" map, and the entries of the reply itself.
enum class Whole { kNone, kInfo, kDocs, kList };

void sortInfoEntry(Node* entry) {
  if (entry->kids.size() == 10) {
    std::vector<Node>& subs = entry->kids[9].kids;
    std::sort(subs.begin(), subs.end(),
              [](const Node& a, const Node& b) { return a.bytes() < b.bytes(); });
  }
}

// A flat list of name/value pairs (a RESP2 map, or a RESP3 map's elements), sorted by name.
void sortPairs(std::vector<Node>* kids) {
  std::vector<std::pair<Node, Node>> pairs;
  for (size_t i = 0; i + 1 < kids->size(); i += 2) {
    pairs.emplace_back((*kids)[i], (*kids)[i + 1]);
  }
  std::sort(pairs.begin(), pairs.end(),
            [](const auto& a, const auto& b) { return a.first.bytes() < b.first.bytes(); });
  kids->clear();
  for (auto& [k, v] : pairs) {
    kids->push_back(std::move(k));
    kids->push_back(std::move(v));
  }
}

void sortDocs(Node* docs) {
  for (size_t i = 0; i + 1 < docs->kids.size(); i += 2) {
    if (docs->kids[i].text() == "subcommands") {
      Node& subs = docs->kids[i + 1];
      for (size_t j = 1; j < subs.kids.size(); j += 2) {
        sortDocs(&subs.kids[j]);
      }
      sortPairs(&subs.kids);
    }
  }
}

std::string canonical(const std::string& reply, Whole whole) {
  Node root;
  if (whole == Whole::kNone || parse(reply, 0, &root) != reply.size()) {
    return reply;
  }
  switch (whole) {
    case Whole::kInfo:
      for (Node& entry : root.kids) {
        sortInfoEntry(&entry);
      }
      std::sort(root.kids.begin(), root.kids.end(),
                [](const Node& a, const Node& b) { return a.bytes() < b.bytes(); });
      break;
    case Whole::kDocs:
      for (size_t j = 1; j < root.kids.size(); j += 2) {
        sortDocs(&root.kids[j]);
      }
      sortPairs(&root.kids);
      break;
    case Whole::kList:
      std::sort(root.kids.begin(), root.kids.end(),
                [](const Node& a, const Node& b) { return a.bytes() < b.bytes(); });
      break;
    case Whole::kNone:
      break;
  }
  return root.bytes();
}

// A raw connection that pipelines requests and reads their replies in order.
class Conn {
 public:
  explicit Conn(uint16_t port) : raw_(port) {}

  std::vector<std::string> callAll(const std::vector<Argv>& argvs) {
    std::vector<std::string> replies;
    for (size_t at = 0; at < argvs.size(); at += kBatch) {
      std::string out;
      const size_t end = std::min(argvs.size(), at + kBatch);
      for (size_t i = at; i < end; ++i) {
        out += encodeCommand(argvs[i]);
      }
      EXPECT_TRUE(raw_.sendAll(out));
      for (size_t i = at; i < end; ++i) {
        replies.push_back(next());
      }
    }
    return replies;
  }
  std::string call(const Argv& argv) { return callAll({argv})[0]; }

 private:
  static constexpr size_t kBatch = 200;

  std::string next() {
    while (true) {
      Node node;
      const size_t used = buffer_.empty() ? std::string::npos : parse(buffer_, 0, &node);
      if (used != std::string::npos) {
        std::string reply = buffer_.substr(0, used);
        buffer_.erase(0, used);
        return reply;
      }
      if (raw_.readSome(&buffer_, 10s) != RawConn::Read::kData) {
        return "(timeout)";
      }
    }
  }

  RawConn raw_;
  std::string buffer_;
};

// The names of a flat array of bulk strings (COMMAND LIST, ACL CAT).
std::vector<std::string> names(const std::string& reply) {
  Node root;
  parse(reply, 0, &root);
  std::vector<std::string> out;
  for (const Node& k : root.kids) {
    out.push_back(k.text());
  }
  return out;
}

std::string describe(const Argv& argv) {
  std::string out;
  for (const std::string& a : argv) {
    out += (out.empty() ? "" : " ") + (a.empty() ? "''" : a);
  }
  return out;
}

class CommandIntrospectionTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    if (directMode()) {
      GTEST_SKIP() << "compares the proxy with a redis-server of its own";
    }
    env_ = std::make_unique<Deployment>(2, 1);
    ref_server_ = std::make_unique<RedisServer>();
    proxy_ = std::make_unique<Conn>(env_->port());
    ref_ = std::make_unique<Conn>(ref_server_->port());
    if (GetParam() == 3) {
      proxy_->call({"HELLO", "3"});
      ref_->call({"HELLO", "3"});
    }
  }

  // Every request on both sides; each reply of the proxy must equal redis-server's (with the
  // hash-ordered levels sorted when `whole` says so).
  void same(const std::vector<Argv>& argvs, Whole whole = Whole::kNone) {
    const std::vector<std::string> got = proxy_->callAll(argvs);
    const std::vector<std::string> want = ref_->callAll(argvs);
    for (size_t i = 0; i < argvs.size(); ++i) {
      EXPECT_EQ(canonical(got[i], whole), canonical(want[i], whole))
          << "RESP" << GetParam() << ": " << describe(argvs[i]);
    }
  }

  // Every Redis command and subcommand name, from the reference.
  std::vector<std::string> allNames() { return names(ref_->call({"COMMAND", "LIST"})); }

  std::unique_ptr<Deployment> env_;
  std::unique_ptr<RedisServer> ref_server_;
  std::unique_ptr<Conn> proxy_;
  std::unique_ptr<Conn> ref_;
};

INSTANTIATE_TEST_SUITE_P(Protocols, CommandIntrospectionTest, ::testing::Values(2, 3),
                         [](const auto& param) { return "Resp" + std::to_string(param.param); });

TEST_P(CommandIntrospectionTest, WholeLists) {
  same({{"COMMAND"}, {"command"}, {"COMMAND", "INFO"}}, Whole::kInfo);
  same({{"COMMAND", "DOCS"}}, Whole::kDocs);
  same({{"COMMAND", "LIST"}}, Whole::kList);
  same({{"COMMAND", "COUNT"}, {"command", "count"}});
  // PROXY is the proxy's own: no list names it.
  const std::vector<std::string> listed = names(proxy_->call({"COMMAND", "LIST"}));
  EXPECT_EQ(std::count(listed.begin(), listed.end(), "proxy"), 0);
}

TEST_P(CommandIntrospectionTest, InfoAndDocsOfEveryCommand) {
  const std::vector<std::string> all = allNames();
  std::vector<Argv> leaves;
  std::vector<Argv> containers;
  for (const std::string& name : all) {
    const bool container = std::any_of(all.begin(), all.end(), [&](const std::string& other) {
      return other.starts_with(name + "|");
    });
    for (const char* sub : {"INFO", "DOCS"}) {
      (container ? containers : leaves).push_back({"COMMAND", sub, name});
    }
  }
  ASSERT_GT(leaves.size(), 600u);
  same(leaves);
  for (const Argv& argv : containers) {
    same({argv}, argv[1] == "INFO" ? Whole::kInfo : Whole::kDocs);
  }
}

TEST_P(CommandIntrospectionTest, InfoAndDocsNames) {
  same({{"COMMAND", "INFO", "nosuch"},
        {"COMMAND", "INFO", "get", "nosuch", "GET", "Set"},
        {"COMMAND", "INFO", "config|get"},
        {"COMMAND", "INFO", "CONFIG|GET", "Client|No-Evict"},
        {"COMMAND", "INFO", "config get"},
        {"COMMAND", "INFO", "get|x"},
        {"COMMAND", "INFO", "config|"},
        {"COMMAND", "INFO", "|get"},
        {"COMMAND", "INFO", "|"},
        {"COMMAND", "INFO", "config|get|x"},
        {"COMMAND", "INFO", ""},
        {"COMMAND", "DOCS", "nosuch"},
        {"COMMAND", "DOCS", "get", "get", "nosuch", "SET"},
        {"COMMAND", "DOCS", "config|get", "XINFO|STREAM"},
        {"COMMAND", "DOCS", "config|", "", "get|x", "config|get|x"},
        {"COMMAND", "DOCS", "set", "georadius", "xadd", "client|kill", "migrate"}});
  same({{"COMMAND", "INFO", "config", "get", "object"}}, Whole::kInfo);
  same({{"COMMAND", "DOCS", "config", "get", "object"}}, Whole::kDocs);
}

// PROXY, named, is described (redis-server knows no such command); the lists leave it out.
TEST_P(CommandIntrospectionTest, ProxyCommandOnlyWhenNamed) {
  const std::string nil = GetParam() == 3 ? "_\r\n" : "$-1\r\n";
  EXPECT_EQ(ref_->call({"COMMAND", "INFO", "proxy"}), "*1\r\n" + nil);
  const std::string info = proxy_->call({"COMMAND", "INFO", "PROXY", "proxy|slots"});
  EXPECT_TRUE(info.starts_with("*2\r\n*10\r\n$5\r\nproxy\r\n:-2\r\n")) << info;
  EXPECT_NE(info.find("*10\r\n$11\r\nproxy|slots\r\n:2\r\n"), std::string::npos) << info;
  const std::string docs = proxy_->call({"COMMAND", "DOCS", "proxy|reload"});
  EXPECT_TRUE(docs.starts_with((GetParam() == 3 ? "%1" : "*2") +
                               std::string("\r\n$12\r\nproxy|reload\r\n")))
      << docs;
  for (const Argv& argv :
       std::vector<Argv>{{"COMMAND"}, {"COMMAND", "INFO"}, {"COMMAND", "DOCS"}}) {
    EXPECT_EQ(proxy_->call(argv).find("$5\r\nproxy\r\n"), std::string::npos) << describe(argv);
  }
  EXPECT_EQ(proxy_->call({"COMMAND", "LIST", "FILTERBY", "PATTERN", "prox*"}), "*0\r\n");
}

TEST_P(CommandIntrospectionTest, ListFilters) {
  std::vector<Argv> lists = {
      {"COMMAND", "LIST", "FILTERBY", "pattern", "config*"},
      {"COMMAND", "LIST", "filterby", "aclcat", "hyperloglog"},
      {"COMMAND", "LIST", "FILTERBY", "ACLCAT", "HYPERLOGLOG"},
      {"COMMAND", "LIST", "FILTERBY", "ACLCAT", "@hyperloglog"},
      {"COMMAND", "LIST", "FILTERBY", "ACLCAT", "nosuch"},
      {"COMMAND", "LIST", "FILTERBY", "MODULE", "x"},
      {"COMMAND", "LIST", "FILTERBY", "PATTERN", "CONFIG|G*"},
      {"COMMAND", "LIST", "FILTERBY", "PATTERN", "*"},
      {"COMMAND", "LIST", "FILTERBY", "PATTERN", "*|*"},
      {"COMMAND", "LIST", "FILTERBY", "PATTERN", "?et"},
      {"COMMAND", "LIST", "FILTERBY", "PATTERN", "x[a-c]*"},
      {"COMMAND", "LIST", "FILTERBY", "PATTERN", "x[c-a]*"},
      {"COMMAND", "LIST", "FILTERBY", "PATTERN", "[^a-x]*"},
      {"COMMAND", "LIST", "FILTERBY", "PATTERN", "[A-C]*"},
      {"COMMAND", "LIST", "FILTERBY", "PATTERN", "[\\g]et"},
      {"COMMAND", "LIST", "FILTERBY", "PATTERN", "\\g*"},
      {"COMMAND", "LIST", "FILTERBY", "PATTERN", "ge\\"},
      {"COMMAND", "LIST", "FILTERBY", "PATTERN", "get["},
      {"COMMAND", "LIST", "FILTERBY", "PATTERN", "ge[t"},
      {"COMMAND", "LIST", "FILTERBY", "PATTERN", "[a-"},
      {"COMMAND", "LIST", "FILTERBY", "PATTERN", "*[a-]"},
      {"COMMAND", "LIST", "FILTERBY", "PATTERN", "[]]*"},
      {"COMMAND", "LIST", "FILTERBY", "PATTERN", "g*t**"},
      {"COMMAND", "LIST", "FILTERBY", "PATTERN", "*a*b*c*"},
      {"COMMAND", "LIST", "FILTERBY", "PATTERN", ""},
      {"COMMAND", "LIST", "FILTERBY", "PATTERN", "prox*"},
  };
  for (const std::string& category : names(ref_->call({"ACL", "CAT"}))) {
    lists.push_back({"COMMAND", "LIST", "FILTERBY", "ACLCAT", category});
  }
  same(lists, Whole::kList);
  // Junk: redis-server's syntax errors.
  same({{"COMMAND", "LIST", "x"},
        {"COMMAND", "LIST", "FILTERBY"},
        {"COMMAND", "LIST", "FILTERBY", "PATTERN"},
        {"COMMAND", "LIST", "FILTERBY", "PATTERN", "x", "y"},
        {"COMMAND", "LIST", "FILTERBY", "nope", "x"},
        {"COMMAND", "LIST", "x", "FILTERBY", "PATTERN", "x"},
        {"COMMAND", "LIST", "FILTERBY", "PATTERN", "a", "FILTERBY", "PATTERN", "b"}});
}

TEST_P(CommandIntrospectionTest, ErrorsAndHelp) {
  same({{"COMMAND", "COUNT", "x"},
        {"COMMAND", "NOSUB"},
        {"COMMAND", "HELP"},
        {"command", "help"},
        {"COMMAND", "HELP", "x"},
        {"COMMAND", "GETKEYS"},
        {"COMMAND", "GETKEYS", "get"},
        {"COMMAND", "GETKEYSANDFLAGS"},
        {"COMMAND", "GETKEYSANDFLAGS", "ping"}});
}

TEST_P(CommandIntrospectionTest, GetKeysCorpus) {
  const std::vector<Argv> cases = {
      {"nosuch", "a"},
      {"get", "a", "b"},
      {"ping", "x"},
      {"config", "get", "x"},
      {"config", "nosub"},
      {"config", "nosub", "x"},
      {"object", "x"},
      {"object", "encoding", "k"},
      {"OBJECT", "ENCODING", "k"},
      {"get", "k"},
      {"GET", "k"},
      {"set", "k", "v"},
      {"set", "k", "v", "get"},
      {"set", "k", "v", "GET", "ex", "1"},
      {"set", "k", "v", "gets"},
      {"mset", "a", "1", "a", "2"},
      {"mset", "a", "1", "b"},
      {"lmove", "a", "b", "left", "right"},
      {"eval", "return 1", "0"},
      {"eval", "return 1", "0", "k1", "k2"},
      {"eval", "return 1", "2", "k1", "k2"},
      {"eval", "return 1", "3", "k1"},
      {"eval", "return 1", "-1"},
      {"eval", "return 1", "x"},
      {"eval", "return 1", "01", "k"},
      {"eval", "return 1", " 1", "k"},
      {"eval", "return 1", "+1", "k"},
      {"eval", "return 1", "1x", "k"},
      {"eval", "return 1", "-0", "k"},
      {"eval", "return 1", "4294967297", "k"},
      {"eval", "return 1", "2147483647", "k"},
      {"eval", "return 1", "99999999999999999999", "k"},
      {"evalsha_ro", "abc", "1", "k"},
      {"fcall", "f", "2", "a", "b", "arg"},
      {"zunionstore", "d", "2", "a", "b"},
      {"zunionstore", "d", "5", "a", "b"},
      {"zunionstore", "d", "01", "a"},
      {"zinter", "2", "a", "b", "WEIGHTS", "1", "2"},
      {"zintercard", "01", "a"},
      {"sintercard", "2", "a", "b", "LIMIT", "1"},
      {"lmpop", "2", "a", "b", "left"},
      {"blmpop", "0", "2", "a", "b", "left"},
      {"bzmpop", "0", "3", "a", "b", "min"},
      {"zmpop", "1", "a", "min"},
      {"sort", "k"},
      {"sort", "k", "store", "d"},
      {"sort", "k", "by", "x", "store"},
      {"sort", "k", "store", "d", "store", "e"},
      {"sort", "k", "limit", "store", "x", "store", "d"},
      {"sort", "k", "get", "store", "STORE", "d"},
      {"sort", "k", "store", "store", "x"},
      {"sort_ro", "k", "by", "x"},
      {"migrate", "h", "1", "k", "0", "5"},
      {"migrate", "h", "1", "", "0", "5", "keys", "a", "b"},
      {"migrate", "h", "1", "k", "0", "5", "keys", "a", "b"},
      {"migrate", "h", "1", "", "0", "5", "copy", "replace", "keys", "a"},
      {"migrate", "h", "1", "", "0", "5", "auth", "keys", "keys", "a"},
      {"migrate", "h", "1", "", "0", "5", "auth2", "u", "keys", "keys", "a"},
      {"georadius", "k", "1", "2", "3", "m", "store", "x", "storedist", "y"},
      {"georadius", "k", "1", "2", "3", "m", "store"},
      {"georadius_ro", "k", "1", "2", "3", "m"},
      {"georadiusbymember", "k", "m", "3", "km", "store", "x"},
      {"xread", "streams", "a", "b", "0", "0"},
      {"xread", "count", "1", "streams", "a", "b", "0"},
      {"xread", "streams", "a"},
      {"xread", "block", "0", "streams", "a", "0"},
      {"xread", "count", "1", "block", "0", "streams"},
      {"xreadgroup", "group", "g", "c", "streams", "a", "b"},
      {"xreadgroup", "group", "g", "c", "noack", "streams", "a", "b", "0", "0"},
      {"bitfield", "k", "get", "u8", "0"},
      {"bitfield", "k", "get", "u8", "0", "set", "u8", "0", "1"},
      {"bitfield", "k", "overflow", "wrap", "get", "u8", "0"},
      {"bitfield", "k", "get", "u8"},
      {"bitfield", "k"},
      {"bitfield_ro", "k", "get", "u8", "0"},
      {"spublish", "ch", "m"},
      {"publish", "ch", "m"},
      {"ssubscribe", "a", "b"},
      {"pfcount", "a", "b"},
      {"bitop", "and", "d", "a", "b"},
      {"memory", "usage", "k"},
      {"xinfo", "stream", "k"},
      {"xgroup", "create", "k", "g", "$"},
      {"lcs", "a", "b"},
      {"copy", "a", "b", "db", "1"},
      {"restore", "k", "0", "x"},
      {"blpop", "a", "b", "0"},
      {"proxy", "info"},
  };
  std::vector<Argv> requests;
  for (const Argv& args : cases) {
    for (const char* sub : {"GETKEYS", "GETKEYSANDFLAGS"}) {
      Argv argv = {"COMMAND", sub};
      argv.insert(argv.end(), args.begin(), args.end());
      requests.push_back(std::move(argv));
    }
  }
  requests.pop_back();  // PROXY is the proxy's own: redis-server does not know it
  requests.pop_back();
  same(requests);
  EXPECT_EQ(proxy_->call({"COMMAND", "GETKEYS", "proxy", "info"}),
            "-ERR The command has no key arguments\r\n");
}

// Every command and subcommand with argument lists of every length up to ten, made of words that
// mean something to key specs and getkeys functions (numkeys, STORE, STREAMS, KEYS, GET, ...).
TEST_P(CommandIntrospectionTest, GetKeysOfEveryCommand) {
  const std::vector<std::vector<std::string>> tails = {
      {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"},
      {"2", "a", "b", "c", "d", "e", "f", "g", "h", "i"},
      {"x", "2", "a", "b", "store", "d", "e", "f", "g", "h"},
      {"k", "1", "2", "3", "m", "store", "s", "storedist", "t", "u"},
      {"streams", "a", "b", "0", "0", "x", "y", "z", "w", "v"},
      {"", "1", "", "0", "5", "keys", "a", "b", "c", "d"},
      {"k", "get", "u8", "0", "set", "i8", "1", "2", "by", "z"},
  };
  std::vector<Argv> requests;
  for (const std::string& name : allNames()) {
    Argv head = {"COMMAND", "GETKEYSANDFLAGS"};
    const size_t bar = name.find('|');
    head.push_back(name.substr(0, bar));
    if (bar != std::string::npos) {
      head.push_back(name.substr(bar + 1));
    }
    for (const auto& tail : tails) {
      for (size_t n = 0; n <= tail.size(); ++n) {
        Argv argv = head;
        argv.insert(argv.end(), tail.begin(), tail.begin() + static_cast<std::ptrdiff_t>(n));
        requests.push_back(argv);
        argv[1] = "GETKEYS";
        requests.push_back(std::move(argv));
      }
    }
  }
  same(requests);
}

}  // namespace
}  // namespace sp::test
