// Reloader: what a reload accepts (a valid file: its shards published, restart-only keys kept at
// their running values with a note) and refuses whole (no file, an invalid one, a TLS file that
// cannot be read), how each outcome is counted, and how queued PROXY RELOAD requests are answered
// (one reload for a signal and every request before it; at once after shutdown began).
#include "control/reload.h"

#include <gtest/gtest.h>

#include <signal.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "config/loader.h"
#include "net/proxy_context.h"
#include "unit/control/proxy_with_workers.h"

namespace sp::control {
namespace {

using testing::ProxyWithWorkers;

// The running proxy: one shard on a privileged port nothing listens on, started from a file.
class ReloadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/sp-reload-test-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    dir_ = dir;
    cmdline_.config_path = dir_ + "/proxy.yaml";
  }
  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  // Writes the config file that the next reload reads.
  void writeConfig(const std::string& yaml) { std::ofstream(cmdline_.config_path) << yaml; }

  std::string dir_;
  config::CommandLine cmdline_;
  ProxyWithWorkers proxy_{std::vector<route::ShardAddress>{{"s0", "127.0.0.1", 1}}};
  net::ProxyContext& context_ = proxy_.context();
};

constexpr const char* kTwoShards = R"(
shards:
  - name: a
    address: 127.0.0.1:1
  - name: b
    address: 127.0.0.1:2
)";

TEST_F(ReloadTest, AValidFilePublishesItsShardsAndCountsASuccess) {
  writeConfig(kTwoShards);
  Reloader reloader(context_, cmdline_);
  const ReloadOutcome outcome = reloader.reload("test");
  EXPECT_TRUE(outcome.ok) << outcome.message;
  EXPECT_EQ(outcome.message, "");
  ASSERT_EQ(context_.topology()->shardCount(), 2u);
  EXPECT_EQ(context_.topology()->shards()[0].name, "a");
  EXPECT_EQ(context_.topology()->shards()[1].name, "b");
  EXPECT_EQ(context_.config()->shards.size(), 2u);
  EXPECT_EQ(context_.reloads.succeeded.load(), 1u);
  EXPECT_EQ(context_.reloads.failed.load(), 0u);
  EXPECT_TRUE(context_.reloads.last_ok.load());
  EXPECT_GT(context_.reloads.last_success_unix.load(), 0u);
}

TEST_F(ReloadTest, KeysThatNeedARestartKeepTheirRunningValuesWithANote) {
  writeConfig(std::string(kTwoShards) + "listen:\n  port: 7777\nworkers: 3\nio_uring: false\n");
  Reloader reloader(context_, cmdline_);
  const ReloadOutcome outcome = reloader.reload("test");
  ASSERT_TRUE(outcome.ok) << outcome.message;
  EXPECT_EQ(outcome.message,
            "listen.port changed: needs a restart, keeping the running value; "
            "workers changed: needs a restart, keeping the running value; "
            "io_uring changed: needs a restart, keeping the running value");
  EXPECT_EQ(context_.config()->listen_port, 6380);  // the running (default) values
  EXPECT_EQ(context_.config()->workers, 0);
  EXPECT_TRUE(context_.config()->io_uring);
  EXPECT_EQ(context_.config()->shards.size(), 2u);  // the rest of the file applies
}

TEST_F(ReloadTest, FromFlagsAloneThereIsNothingToReload) {
  const auto running = context_.config();
  Reloader reloader(context_, config::CommandLine{});
  const ReloadOutcome outcome = reloader.reload("test");
  EXPECT_FALSE(outcome.ok);
  EXPECT_EQ(outcome.message,
            "--config: no configuration file to reload (started from flags alone)");
  EXPECT_EQ(context_.config(), running);
  EXPECT_EQ(context_.reloads.failed.load(), 1u);
  EXPECT_FALSE(context_.reloads.last_ok.load());
}

TEST_F(ReloadTest, AnInvalidFileIsRefusedWholeWithEveryError) {
  const auto running = context_.config();
  const auto topology = context_.topology();
  writeConfig(std::string(kTwoShards) + "no_such_key: 1\nworkers: many\n");
  Reloader reloader(context_, cmdline_);
  const ReloadOutcome outcome = reloader.reload("test");
  EXPECT_FALSE(outcome.ok);
  EXPECT_NE(outcome.message.find("no_such_key: "), std::string::npos) << outcome.message;
  EXPECT_NE(outcome.message.find("; workers: "), std::string::npos) << outcome.message;
  EXPECT_EQ(context_.config(), running);
  EXPECT_EQ(context_.topology(), topology);
  EXPECT_EQ(context_.reloads.failed.load(), 1u);
  EXPECT_EQ(context_.reloads.succeeded.load(), 0u);
}

TEST_F(ReloadTest, AMissingFileIsRefused) {
  Reloader reloader(context_, cmdline_);  // nothing written
  const ReloadOutcome outcome = reloader.reload("test");
  EXPECT_FALSE(outcome.ok);
  EXPECT_NE(outcome.message.find(cmdline_.config_path), std::string::npos) << outcome.message;
  EXPECT_EQ(context_.reloads.failed.load(), 1u);
}

TEST_F(ReloadTest, AnUnreadableBackendTlsFileIsRefusedAfterAGoodReloadWhichStays) {
  writeConfig(kTwoShards);
  Reloader reloader(context_, cmdline_);
  ASSERT_TRUE(reloader.reload("first").ok);
  const auto good = context_.config();
  const uint64_t good_at = context_.reloads.last_success_unix.load();

  const std::string ca = dir_ + "/no-such-ca.crt";
  writeConfig(std::string(kTwoShards) +
              "backend:\n  tls:\n    enabled: true\n    ca_cert_file: " + ca + "\n");
  const ReloadOutcome outcome = reloader.reload("second");
  EXPECT_FALSE(outcome.ok);
  EXPECT_TRUE(outcome.message.starts_with("backend.tls: ")) << outcome.message;
  EXPECT_NE(outcome.message.find(ca), std::string::npos) << outcome.message;
  EXPECT_EQ(context_.config(), good);
  EXPECT_EQ(context_.backendTls(), nullptr);
  EXPECT_EQ(context_.reloads.succeeded.load(), 1u);
  EXPECT_EQ(context_.reloads.failed.load(), 1u);
  EXPECT_FALSE(context_.reloads.last_ok.load());
  EXPECT_EQ(context_.reloads.last_success_unix.load(), good_at);
}

// request() wakes the main thread with SIGHUP: ignored here, so that the test is the main thread.
class IgnoreSighup {
 public:
  IgnoreSighup() { previous_ = ::signal(SIGHUP, SIG_IGN); }
  ~IgnoreSighup() { ::signal(SIGHUP, previous_); }

 private:
  sighandler_t previous_;
};

TEST_F(ReloadTest, OneReloadAnswersTheSignalAndEveryRequestQueuedBeforeIt) {
  IgnoreSighup ignore;
  writeConfig(kTwoShards);
  Reloader reloader(context_, cmdline_);
  std::vector<ReloadOutcome> answers;
  reloader.request([&](const ReloadOutcome& o) { answers.push_back(o); });
  reloader.request([&](const ReloadOutcome& o) { answers.push_back(o); });
  EXPECT_TRUE(answers.empty());  // answered on the main thread, after the reload
  reloader.onSignal();
  ASSERT_EQ(answers.size(), 2u);
  EXPECT_TRUE(answers[0].ok);
  EXPECT_TRUE(answers[1].ok);
  EXPECT_EQ(context_.reloads.succeeded.load(), 1u);
  reloader.onSignal();  // a plain SIGHUP: reloads, answers no one
  EXPECT_EQ(answers.size(), 2u);
  EXPECT_EQ(context_.reloads.succeeded.load(), 2u);
}

TEST_F(ReloadTest, AtShutdownQueuedRequestsAreRefusedAndLaterOnesAnsweredAtOnce) {
  IgnoreSighup ignore;
  writeConfig(kTwoShards);
  Reloader reloader(context_, cmdline_);
  std::vector<ReloadOutcome> answers;
  reloader.request([&](const ReloadOutcome& o) { answers.push_back(o); });
  reloader.cancelPending("stopping");
  ASSERT_EQ(answers.size(), 1u);
  EXPECT_FALSE(answers[0].ok);
  EXPECT_EQ(answers[0].message, "stopping");
  reloader.request([&](const ReloadOutcome& o) { answers.push_back(o); });
  ASSERT_EQ(answers.size(), 2u);
  EXPECT_FALSE(answers[1].ok);
  EXPECT_EQ(answers[1].message, "proxy shutting down");
  reloader.onSignal();  // nothing queued any more
  EXPECT_EQ(answers.size(), 2u);
  EXPECT_EQ(context_.reloads.succeeded.load() + context_.reloads.failed.load(), 1u);
}

}  // namespace
}  // namespace sp::control
