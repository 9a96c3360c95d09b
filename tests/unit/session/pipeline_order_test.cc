// The ordering invariant of session/client_session.h under uneven shards: a deep pipeline whose
// requests go to a shard that answers in slow parts and to one that answers at once, with local
// replies and a split MGET between them, is answered in request order, every reply whole.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "fakes/redis_client.h"
#include "fakes/scripted_shard.h"
#include "fakes/worker_harness.h"
#include "route/topology.h"

namespace sp::session {
namespace {

using fakes::RedisClient;
using fakes::Reply;
using fakes::ScriptedShard;
using fakes::WorkerHarness;
using Argv = ScriptedShard::Argv;

// "<tag>:<key>" for a GET, one "<tag>:<key>" per key for an MGET; `parts`: how many pieces the
// reply is written in (20 ms apart).
ScriptedShard::Script tagging(std::string tag, size_t parts) {
  return [tag, parts](const Argv& argv) {
    std::string bytes;
    if (argv[0] == "MGET") {
      bytes = "*" + std::to_string(argv.size() - 1) + "\r\n";
      for (size_t i = 1; i < argv.size(); ++i) {
        bytes += fakes::bulk(tag + ":" + argv[i]);
      }
    } else {
      bytes = fakes::bulk(tag + ":" + argv[1]);
    }
    ScriptedShard::Answer answer;
    const size_t step = (bytes.size() + parts - 1) / parts;
    for (size_t at = 0; at < bytes.size(); at += step) {
      answer.parts.push_back(bytes.substr(at, step));
    }
    return answer;
  };
}

TEST(PipelineOrderTest, RepliesFromASlowAndAFastShardComeBackInRequestOrder) {
  ScriptedShard slow(tagging("slow", 3));
  ScriptedShard fast(tagging("fast", 1));
  const route::TopologyPtr topology =
      route::Topology::evenSplit({route::ShardAddress("s0", "127.0.0.1", slow.port()),
                                  route::ShardAddress("s1", "127.0.0.1", fast.port())});
  WorkerHarness harness(topology, fakes::noPings, WorkerHarness::Listen::kLoopback);
  RedisClient client(harness.port());
  const std::vector<std::string> s = fakes::keysOn(*topology, 0, 4);
  const std::vector<std::string> f = fakes::keysOn(*topology, 1, 6);

  std::vector<std::vector<std::string>> commands;
  std::vector<std::string> want;  // a GET's or PING's reply; MGET's elements joined by ","
  for (size_t i = 0; i < 4; ++i) {
    commands.push_back({"GET", s[i]});
    want.push_back("slow:" + s[i]);
    commands.push_back({"GET", f[i]});
    want.push_back("fast:" + f[i]);
    commands.push_back({"PING"});
    want.push_back("PONG");
  }
  commands.push_back({"MGET", f[4], s[0], f[5]});
  want.push_back("fast:" + f[4] + ",slow:" + s[0] + ",fast:" + f[5]);
  commands.push_back({"GET", f[0]});
  want.push_back("fast:" + f[0]);

  const std::vector<Reply> replies = client.pipeline(commands);
  ASSERT_EQ(replies.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_TRUE(replies[i] != nullptr) << "reply " << i;
    std::string got;
    if (replies[i]->type == REDIS_REPLY_ARRAY) {
      for (size_t e = 0; e < replies[i]->elements; ++e) {
        got += (e == 0 ? "" : ",") + fakes::text(*replies[i]->element[e]);
      }
    } else {
      got = fakes::text(*replies[i]);
    }
    EXPECT_EQ(got, want[i]) << "reply " << i;
  }
}

}  // namespace
}  // namespace sp::session
