// Value sizes through the proxy: 0 B, 1 MB, 64 MB and 200 MB values set and read back byte for byte
// (binary data, CR LF and NUL included), and large values inside a merged MGET.
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "integration/harness.h"

namespace sp::test {
namespace {

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

std::string randomBytes(size_t n, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::string out(n, '\0');
  for (size_t i = 0; i < n;
       i += sizeof(uint64_t)) {  // eight bytes a draw: fast in sanitizer builds
    const uint64_t v = rng();
    std::memcpy(out.data() + i, &v, std::min(sizeof v, n - i));
  }
  if (n >= 4) {
    out.replace(n / 2, 4, "\r\n\0$", 4);
  }
  return out;
}

// GET through hiredis without rendering, so the bytes can be compared exactly.
bool getBytes(Client& c, const std::string& key, std::string* out) {
  auto* r = static_cast<redisReply*>(redisCommand(c.ctx(), "GET %b", key.data(), key.size()));
  if (r == nullptr || r->type != REDIS_REPLY_STRING) {
    if (r != nullptr) {
      freeReplyObject(r);
    }
    return false;
  }
  out->assign(r->str, r->len);
  freeReplyObject(r);
  return true;
}

std::string setBytes(Client& c, const std::string& key, const std::string& value) {
  auto* r = static_cast<redisReply*>(
      redisCommand(c.ctx(), "SET %b %b", key.data(), key.size(), value.data(), value.size()));
  std::string out = render(r);
  if (r != nullptr) {
    freeReplyObject(r);
  }
  return out;
}

class ValuesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    env_ = std::make_unique<Deployment>(2);
    client_ = std::make_unique<Client>(env_->port());
    ASSERT_TRUE(client_->ok());
  }
  void roundTrip(const std::string& key, size_t size) {
    const std::string value = randomBytes(size, static_cast<uint32_t>(size));
    ASSERT_EQ(setBytes(*client_, key, value), "OK");
    std::string got;
    ASSERT_TRUE(getBytes(*client_, key, &got)) << "GET " << key << " failed";
    ASSERT_EQ(got.size(), value.size());
    EXPECT_TRUE(got == value) << "bytes differ for " << key;
    EXPECT_EQ(client_->cmd({"STRLEN", key}), "(integer) " + std::to_string(size));
    EXPECT_EQ(client_->cmd({"PING"}), "PONG") << "stream stays in sync after " << size << " B";
  }
  std::unique_ptr<Deployment> env_;
  std::unique_ptr<Client> client_;
};

TEST_F(ValuesTest, EmptyValue) {
  roundTrip("val:empty", 0);
  EXPECT_EQ(client_->cmd({"GET", "val:empty"}), "");
  EXPECT_EQ(client_->cmd({"EXISTS", "val:empty"}), "(integer) 1");
}

TEST_F(ValuesTest, OneMegabyte) {
  roundTrip("val:1m", 1 << 20);
  // Several 1 MB values on different shards, merged by one MGET.
  std::vector<std::string> values;
  for (int i = 0; i < 6; ++i) {
    values.push_back(randomBytes(1 << 20, 77 + i));
    ASSERT_EQ(setBytes(*client_, "val:m" + std::to_string(i), values.back()), "OK");
  }
  auto* r = static_cast<redisReply*>(redisCommand(client_->ctx(),
                                                  "MGET val:m0 val:m1 val:nope val:m2 val:m3 "
                                                  "val:m4 val:m5"));
  ASSERT_NE(r, nullptr);
  ASSERT_EQ(r->type, REDIS_REPLY_ARRAY);
  ASSERT_EQ(r->elements, 7u);
  EXPECT_EQ(r->element[2]->type, REDIS_REPLY_NIL);
  for (int i = 0, e = 0; i < 6; ++i, ++e) {
    if (e == 2) {
      ++e;
    }
    ASSERT_EQ(r->element[e]->type, REDIS_REPLY_STRING);
    EXPECT_TRUE(std::string(r->element[e]->str, r->element[e]->len) == values[i]) << i;
  }
  freeReplyObject(r);
}

TEST_F(ValuesTest, SixtyFourMegabytes) {
  roundTrip("val:64m", 64u << 20);
  EXPECT_EQ(client_->cmd({"DEL", "val:64m"}), "(integer) 1");
}

// With default settings: writing and reading 200 MB takes seconds, but bytes keep moving, so it
// is not a stall (backend.timeout_ms), and the shard is never failed or ejected for it.
TEST_F(ValuesTest, TwoHundredMegabytes) {
  const std::string key = "val:200m";
  const std::string value = randomBytes(200u << 20, 200);
  ASSERT_EQ(setBytes(*client_, key, value), "OK");
  // Read on a plain socket into a buffer that grows geometrically: hiredis grows its read
  // buffer 1 MB at a time, which sanitizer builds (whose realloc always copies) make quadratic.
  RawConn raw(env_->port());
  ASSERT_TRUE(
      raw.sendAll("*2\r\n$3\r\nGET\r\n$" + std::to_string(key.size()) + "\r\n" + key + "\r\n"));
  const std::string header = "$" + std::to_string(value.size()) + "\r\n";
  const size_t expected = header.size() + value.size() + 2;
  std::string got;
  got.reserve(expected);
  // The proxy relays a reply once it holds all of it, so the first byte comes only after the
  // whole value has crossed from the shard: 3-4 s in a release build here, about 30 s under
  // ThreadSanitizer, which shadows every byte each copy touches.
  const auto patience = std::chrono::milliseconds(kSanitized ? 180000 : 30000);
  while (got.size() < expected && raw.readSome(&got, patience) == RawConn::Read::kData) {
  }
  ASSERT_EQ(got.size(), expected) << got.substr(0, 200);
  EXPECT_EQ(got.compare(0, header.size(), header), 0) << got.substr(0, 200);
  EXPECT_TRUE(got.compare(header.size(), value.size(), value) == 0) << "bytes differ";
  EXPECT_EQ(client_->cmd({"PING"}), "PONG");
  EXPECT_EQ(client_->cmd({"DEL", "val:200m"}), "(integer) 1");
  if (!directMode()) {
    const std::string shards = client_->cmd({"INFO", "shards"});
    auto count = [&](const std::string& what) {
      size_t n = 0;
      for (size_t at = shards.find(what); at != std::string::npos; at = shards.find(what, at + 1)) {
        ++n;
      }
      return n;
    };
    EXPECT_EQ(count(",timeouts=0,"), 2u) << shards;
    EXPECT_EQ(count(",ejections=0,"), 2u) << shards;
  }
}

}  // namespace
}  // namespace sp::test
