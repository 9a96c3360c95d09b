// The commands a session hands to the control plane (net/control_plane.h), over a fake one: INFO
// asks it for the text, CONFIG RESETSTAT resets its counters, PROXY RELOAD waits for its outcome
// and answers it in order, and a proxy that cannot reload says so without asking.
#include <hiredis/hiredis.h>

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "fakes/fake_control_plane.h"
#include "fakes/fake_shards.h"
#include "fakes/worker_harness.h"
#include "net/listener.h"
#include "net/proxy_context.h"
#include "net/worker.h"
#include "session/worker_clients.h"

namespace sp::session {
namespace {

struct ReplyDeleter {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using Reply = std::unique_ptr<redisReply, ReplyDeleter>;

// A worker listening on loopback over two fake shards, with a fake control plane.
class ControlCommandsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    context_.publish(fakes::configFor(*shards_.topology()), shards_.topology());
    context_.control = &control_;
    std::string error;
    uint16_t port = 0;
    const int fd = net::bindListenSocket("127.0.0.1", 0, &port, &error);
    ASSERT_GE(fd, 0) << error;
    worker_ = std::make_unique<net::Worker>(0, context_, std::vector<net::ListenSocket>{{fd}},
                                            buildWorkerParts);
    context_.workers.push_back(worker_.get());
    worker_->startThread();
    worker_->startAccepting();
    const timeval timeout{5, 0};
    client_ = redisConnectWithTimeout("127.0.0.1", port, timeout);
    ASSERT_TRUE(client_ != nullptr && client_->err == 0);
    redisSetTimeout(client_, timeout);
  }
  void TearDown() override {
    if (client_ != nullptr) {
      redisFree(client_);
    }
    if (worker_) {
      worker_->requestStop();
      worker_->join();
    }
  }

  Reply command(const std::vector<std::string>& argv) {
    std::vector<const char*> args;
    std::vector<size_t> lens;
    for (const std::string& a : argv) {
      args.push_back(a.data());
      lens.push_back(a.size());
    }
    return Reply(static_cast<redisReply*>(
        redisCommandArgv(client_, static_cast<int>(argv.size()), args.data(), lens.data())));
  }

  fakes::FakeShards shards_{2, [](const std::string& what) { ADD_FAILURE() << what; }};
  fakes::FakeControlPlane control_;
  net::ProxyContext context_;
  std::unique_ptr<net::Worker> worker_;
  redisContext* client_ = nullptr;
};

TEST_F(ControlCommandsTest, InfoIsTheControlPlanesText) {
  Reply r = command({"INFO", "server"});
  ASSERT_TRUE(r != nullptr);
  ASSERT_EQ(r->type, REDIS_REPLY_STRING);
  EXPECT_EQ(std::string(r->str, r->len), "# Fake\r\nsections:server\r\n");
  EXPECT_EQ(control_.infoRequests(), std::vector<std::string>{"server"});
}

TEST_F(ControlCommandsTest, ConfigResetstatResetsTheProxysCounters) {
  Reply r = command({"CONFIG", "RESETSTAT"});
  ASSERT_TRUE(r != nullptr);
  EXPECT_EQ(control_.resets.load(), 1);
}

TEST_F(ControlCommandsTest, ReloadUnavailableIsRefusedWithoutAsking) {
  Reply r = command({"PROXY", "RELOAD"});
  ASSERT_TRUE(r != nullptr);
  ASSERT_EQ(r->type, REDIS_REPLY_ERROR);
  EXPECT_EQ(std::string(r->str, r->len), "ERR reload is not available");
  EXPECT_EQ(control_.reloads.load(), 0);
}

TEST_F(ControlCommandsTest, ReloadOutcomeIsTheReplyInItsPlace) {
  control_.can_reload = true;
  control_.outcome = {false, "shards: a list is required"};
  // Pipelined: the reload's reply, answered from another thread's callback, keeps its place
  // between the two PINGs.
  redisAppendCommand(client_, "PING");
  redisAppendCommand(client_, "PROXY RELOAD");
  redisAppendCommand(client_, "PING");
  std::vector<Reply> replies;
  for (int i = 0; i < 3; ++i) {
    void* raw = nullptr;
    ASSERT_EQ(redisGetReply(client_, &raw), REDIS_OK);
    replies.emplace_back(static_cast<redisReply*>(raw));
  }
  EXPECT_EQ(std::string(replies[0]->str, replies[0]->len), "PONG");
  ASSERT_EQ(replies[1]->type, REDIS_REPLY_ERROR);
  EXPECT_EQ(std::string(replies[1]->str, replies[1]->len),
            "ERR reload failed, configuration unchanged: shards: a list is required");
  EXPECT_EQ(std::string(replies[2]->str, replies[2]->len), "PONG");

  control_.outcome = {true, ""};
  Reply ok = command({"PROXY", "RELOAD"});
  ASSERT_TRUE(ok != nullptr);
  EXPECT_EQ(std::string(ok->str, ok->len), "OK");
  EXPECT_EQ(control_.reloads.load(), 2);
}

}  // namespace
}  // namespace sp::session
