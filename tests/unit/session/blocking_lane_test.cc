// BlockingLane::blocks: which requests of the blocking commands block, and so take a dedicated
// connection: every BLPOP-like command; XREAD and XREADGROUP only with BLOCK before STREAMS (after
// it, "block" is a stream's name).
#include "session/blocking_lane.h"

#include <gtest/gtest.h>

#include <string_view>
#include <vector>

#include "resp/command_table.h"

namespace sp::session {
namespace {

bool blocks(std::vector<std::string_view> args) {
  const resp::CommandInfo* cmd = resp::CommandTable::instance().resolve(args);
  EXPECT_NE(cmd, nullptr);
  EXPECT_TRUE(cmd->has(resp::kCmdBlocking)) << cmd->name;
  return BlockingLane::blocks(*cmd, args);
}

TEST(BlockingLaneTest, XreadBlocksOnlyWithBlockBeforeStreams) {
  EXPECT_TRUE(blocks({"BLPOP", "k", "0"}));
  EXPECT_TRUE(blocks({"bzpopmin", "k", "1"}));
  EXPECT_TRUE(blocks({"XREAD", "BLOCK", "0", "STREAMS", "s", "$"}));
  EXPECT_TRUE(blocks({"xread", "count", "1", "block", "10", "streams", "s", "0"}));
  EXPECT_TRUE(blocks({"XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">"}));
  EXPECT_FALSE(blocks({"XREAD", "STREAMS", "s", "0"}));
  EXPECT_FALSE(blocks({"XREAD", "COUNT", "5", "STREAMS", "block", "0"}));
  EXPECT_FALSE(blocks({"XREADGROUP", "GROUP", "g", "c", "STREAMS", "block", ">"}));
}

}  // namespace
}  // namespace sp::session
