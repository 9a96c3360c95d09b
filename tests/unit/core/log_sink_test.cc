// Tests LogSink: lines go to the file, warn-level lines are limited per second with the dropped
// ones counted in one line, info lines never are, and reopen() moves to a new file by the path.
#include "core/log_sink.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include <spdlog/spdlog.h>

namespace sp {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

class LogSinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/sp-logsink-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
    path_ = dir_ + "/proxy.log";
    sink_ = std::make_shared<LogSink>(path_, 5, [this] { return now_ms_; });
    const Status opened = sink_->open();
    ASSERT_TRUE(opened.ok()) << opened.message();
    logger_ = std::make_shared<spdlog::logger>("", sink_);
    logger_->set_level(spdlog::level::info);
  }
  void TearDown() override {
    logger_.reset();
    sink_.reset();
    std::remove(path_.c_str());
    std::remove((path_ + ".1").c_str());
    rmdir(dir_.c_str());
  }

  std::string dir_;
  std::string path_;
  uint64_t now_ms_ = 10000;
  std::shared_ptr<LogSink> sink_;
  std::shared_ptr<spdlog::logger> logger_;
};

TEST_F(LogSinkTest, WarningsAreLimitedPerSecondAndTheDroppedOnesCounted) {
  for (int i = 0; i < 20; ++i) {
    logger_->warn("shard down {}", i);
    logger_->info("info line {}", i);
  }
  logger_->flush();
  std::string text = slurp(path_);
  EXPECT_EQ(count(text, "[warning] shard down"), 5u) << text;
  EXPECT_NE(text.find("shard down 4\n"), std::string::npos);
  EXPECT_EQ(text.find("shard down 5\n"), std::string::npos);
  EXPECT_EQ(count(text, "[info] info line"), 20u) << text;  // never limited
  EXPECT_EQ(sink_->suppressed(), 15u);

  now_ms_ += 999;  // the same second
  logger_->error("still limited");
  now_ms_ += 1;  // the next one: the count of the last, then this line
  logger_->error("new second");
  logger_->flush();
  text = slurp(path_);
  EXPECT_EQ(text.find("still limited"), std::string::npos);
  const size_t note = text.find("16 warning lines suppressed in the last second (at most 5 per");
  ASSERT_NE(note, std::string::npos) << text;
  EXPECT_NE(text.find("[error] new second", note), std::string::npos) << text;
  EXPECT_EQ(sink_->suppressed(), 16u);
}

TEST_F(LogSinkTest, ReopenWritesToTheFileNowAtThePath) {
  logger_->info("before rotation");
  ASSERT_EQ(std::rename(path_.c_str(), (path_ + ".1").c_str()), 0);
  logger_->info("after the move, before reopen");
  const Status reopened = sink_->reopen();
  ASSERT_TRUE(reopened.ok()) << reopened.message();
  logger_->info("after reopen");
  logger_->flush();
  const std::string old_file = slurp(path_ + ".1");
  const std::string new_file = slurp(path_);
  EXPECT_NE(old_file.find("before rotation"), std::string::npos);
  EXPECT_NE(old_file.find("after the move, before reopen"), std::string::npos);
  EXPECT_EQ(new_file.find("before"), std::string::npos) << new_file;
  EXPECT_NE(new_file.find("after reopen"), std::string::npos) << new_file;
}

TEST_F(LogSinkTest, AFileThatCannotBeOpenedIsAnErrorThatNamesIt) {
  LogSink sink(dir_ + "/missing-dir/proxy.log", 5, [] { return uint64_t{0}; });
  const Status opened = sink.open();
  EXPECT_FALSE(opened.ok());
  EXPECT_NE(opened.message().find("missing-dir/proxy.log: No such file or directory"),
            std::string::npos)
      << opened.message();
}

}  // namespace
}  // namespace sp
