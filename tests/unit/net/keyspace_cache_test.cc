// KeyspaceCache::serverVersion: the version INFO and HELLO report is the first answering shard's.
#include <gtest/gtest.h>

#include <vector>

#include "net/keyspace_cache.h"

namespace sp::net {
namespace {

ShardKeyspace shard(std::string name, bool ok, std::string version) {
  ShardKeyspace s;
  s.shard = std::move(name);
  s.ok = ok;
  s.info.push_back(InfoField{"server", "redis_version", std::move(version)});
  return s;
}

TEST(KeyspaceCacheTest, ServerVersionIsTheFirstAnsweringShards) {
  KeyspaceCache cache;
  EXPECT_EQ(cache.serverVersion(), "");  // nothing polled yet: the caller uses the table's
  cache.store(
      {shard("s0", false, "6.2.0"), shard("s1", true, "7.2.4"), shard("s2", true, "7.0.15")}, 1);
  EXPECT_EQ(cache.serverVersion(), "7.2.4");
}

}  // namespace
}  // namespace sp::net
