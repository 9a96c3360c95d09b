// What a RESP3 client gets from replies the proxy builds itself (resp/resp3.h through
// ClientSession::replyNow), read as raw bytes over loopback from a worker on two fake shards:
// HELLO 3 answers the server map as a map; CONFIG GET is a map, CLIENT INFO verbatim text, a
// missing name a RESP3 null; HELLO 2 switches back to RESP2 shapes; HELLO with a bad version
// keeps the protocol and says why in redis-server's words.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "fakes/fake_shards.h"
#include "fakes/worker_harness.h"
#include "resp/command_table.h"

namespace sp::session {
namespace {

using fakes::bulk;
using fakes::WorkerHarness;

// A client that writes commands and reads the bytes that come back, nothing parsed.
class RawClient {
 public:
  explicit RawClient(uint16_t port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const timeval timeout{5, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  }
  ~RawClient() { ::close(fd_); }
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  bool connected() const { return connected_; }
  void send(const std::vector<std::string>& argv) {
    std::string out = "*" + std::to_string(argv.size()) + "\r\n";
    for (const std::string& a : argv) {
      out += bulk(a);
    }
    ASSERT_EQ(::send(fd_, out.data(), out.size(), MSG_NOSIGNAL), static_cast<ssize_t>(out.size()));
  }
  // The next `n` bytes (fewer when the proxy went quiet for 5 s or closed).
  std::string read(size_t n) {
    while (in_.size() < n) {
      char buf[4096];
      const ssize_t got = ::recv(fd_, buf, sizeof buf, 0);
      if (got <= 0) {
        break;
      }
      in_.append(buf, static_cast<size_t>(got));
    }
    std::string out = in_.substr(0, n);
    in_.erase(0, out.size());
    return out;
  }
  // The next line, with its CRLF.
  std::string line() {
    std::string out;
    while (!out.ends_with("\r\n")) {
      const std::string c = read(1);
      if (c.empty()) {
        break;
      }
      out += c;
    }
    return out;
  }
  // The reply to `argv` when it is `expected`'s length.
  std::string ask(const std::vector<std::string>& argv, const std::string& expected) {
    send(argv);
    return read(expected.size());
  }

 private:
  int fd_;
  bool connected_ = false;
  std::string in_;
};

class Resp3RepliesTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(client_.connected()); }
  // The client's id, asked in RESP2.
  std::string clientId() {
    client_.send({"CLIENT", "ID"});
    const std::string line = client_.line();
    EXPECT_TRUE(line.starts_with(":")) << line;
    return line.substr(1, line.size() - 3);
  }
  std::string helloMap(const std::string& id) const {
    const std::string version(resp::CommandTable::redisVersion());
    return "%7\r\n" + bulk("server") + bulk("redis") + bulk("version") + bulk(version) +
           bulk("proto") + ":3\r\n" + bulk("id") + ":" + id + "\r\n" + bulk("mode") +
           bulk("standalone") + bulk("role") + bulk("master") + bulk("modules") + "*0\r\n";
  }

  fakes::FakeShards shards_{2, [](const std::string& what) { ADD_FAILURE() << what; }};
  WorkerHarness harness_{shards_.topology(), fakes::noPings, WorkerHarness::Listen::kLoopback};
  RawClient client_{harness_.port()};
};

TEST_F(Resp3RepliesTest, Hello3AnswersTheServerMapAsAMap) {
  const std::string id = clientId();
  const std::string want = helloMap(id);
  EXPECT_EQ(client_.ask({"HELLO", "3"}, want), want);
}

TEST_F(Resp3RepliesTest, ConfigGetIsAMapAndAMissingNameANull) {
  const std::string id = clientId();
  client_.ask({"HELLO", "3"}, helloMap(id));
  const std::string map = "%1\r\n" + bulk("databases") + bulk("1");
  EXPECT_EQ(client_.ask({"CONFIG", "GET", "databases"}, map), map);
  EXPECT_EQ(client_.ask({"CLIENT", "GETNAME"}, "_\r\n"), "_\r\n");
}

TEST_F(Resp3RepliesTest, ClientInfoIsVerbatimText) {
  const std::string id = clientId();
  client_.ask({"HELLO", "3"}, helloMap(id));
  client_.send({"CLIENT", "INFO"});
  const std::string header = client_.line();
  ASSERT_TRUE(header.starts_with("=")) << header;
  const size_t length = std::stoul(header.substr(1));
  const std::string body = client_.read(length + 2);
  EXPECT_TRUE(body.starts_with("txt:id=" + id + " ")) << body;
  EXPECT_TRUE(body.ends_with(" resp=3\n\r\n")) << body;
}

TEST_F(Resp3RepliesTest, Hello2SwitchesBackToResp2Shapes) {
  const std::string id = clientId();
  client_.ask({"HELLO", "3"}, helloMap(id));
  client_.send({"HELLO", "2"});
  EXPECT_EQ(client_.line(), "*14\r\n");
  EXPECT_EQ(client_.read(bulk("server").size()), bulk("server"));
  client_.read(helloMap(id).size() - 4 - bulk("server").size());  // the rest (proto: 2, 1 byte)
  const std::string array = "*2\r\n" + bulk("databases") + bulk("1");
  EXPECT_EQ(client_.ask({"CONFIG", "GET", "databases"}, array), array);
  EXPECT_EQ(client_.ask({"CLIENT", "GETNAME"}, "$-1\r\n"), "$-1\r\n");
}

TEST_F(Resp3RepliesTest, HelloWithAnUnknownVersionKeepsTheProtocol) {
  const std::string noproto = "-NOPROTO unsupported protocol version\r\n";
  EXPECT_EQ(client_.ask({"HELLO", "4"}, noproto), noproto);
  const std::string bad = "-ERR Protocol version is not an integer or out of range\r\n";
  EXPECT_EQ(client_.ask({"HELLO", "x"}, bad), bad);
  EXPECT_EQ(client_.ask({"CLIENT", "GETNAME"}, "$-1\r\n"), "$-1\r\n");
}

}  // namespace
}  // namespace sp::session
