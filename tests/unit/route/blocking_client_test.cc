// BlockingClient against a real redis-server on free loopback ports, serving plain TCP, a Unix
// socket and TLS at once. The TLS certificates (a test CA, a server certificate for localhost and
// 127.0.0.1, and an unrelated CA) are made at test time with the openssl CLI. Fails, never skips,
// when redis-server or openssl cannot be run.
#include "route/blocking_client.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tls/tls_context.h"

namespace sp::route {
namespace {

using std::chrono::milliseconds;

// A port that was free on 127.0.0.1 a moment ago: bind port 0, read it back, close.
uint16_t freeLoopbackPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) {
    return 0;
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  uint16_t port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  ::close(fd);
  return port;
}

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The certificates and one redis-server child, shared by the suite: made in a temp dir, the
// server stopped by PID and the dir removed at the end.
class TestServer {
 public:
  TestServer() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "sp_blocking_XXXXXX").string();
    if (::mkdtemp(tmpl.data()) != nullptr) {
      dir_ = tmpl;
    }
  }
  ~TestServer() {
    stop();
    if (!dir_.empty()) {
      std::error_code ignored;
      std::filesystem::remove_all(dir_, ignored);
    }
  }
  TestServer(const TestServer&) = delete;
  TestServer& operator=(const TestServer&) = delete;

  bool start(std::string* why) {
    if (dir_.empty()) {
      *why = "cannot create a temp dir";
      return false;
    }
    if (!makeCertificates(why)) {
      return false;
    }
    for (int attempt = 0; attempt < 3; ++attempt) {
      port_ = freeLoopbackPort();
      tls_port_ = freeLoopbackPort();
      if (port_ == 0 || tls_port_ == 0 || port_ == tls_port_) {
        *why = "cannot find two free ports";
        continue;
      }
      if (spawn(why) && waitReady(why)) {
        return true;
      }
      stop();
    }
    *why +=
        "\nredis-server log:\n" + readFile(dir_ + "/redis.log") + readFile(dir_ + "/stdout.log");
    return false;
  }

  uint16_t port() const { return port_; }
  uint16_t tlsPort() const { return tls_port_; }
  std::string unixPath() const { return dir_ + "/redis.sock"; }
  std::string path(const char* name) const { return dir_ + "/" + name; }

 private:
  // ca.crt signs server.crt (CN=localhost, SANs localhost and 127.0.0.1); other.crt is a CA that
  // signed nothing here.
  bool makeCertificates(std::string* why) {
    const std::string d = dir_;
    const std::string key = " -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    std::ofstream(d + "/san.cnf") << "subjectAltName=DNS:localhost,IP:127.0.0.1\n";
    const std::vector<std::string> steps = {
        "openssl req -x509" + key + " -keyout " + d + "/ca.key -out " + d +
            "/ca.crt -days 2 -subj /CN=sp-test-ca",
        "openssl req" + key + " -keyout " + d + "/server.key -out " + d +
            "/server.csr -subj /CN=localhost",
        "openssl x509 -req -in " + d + "/server.csr -CA " + d + "/ca.crt -CAkey " + d +
            "/ca.key -CAcreateserial -out " + d + "/server.crt -days 2 -extfile " + d + "/san.cnf",
        "openssl req -x509" + key + " -keyout " + d + "/other.key -out " + d +
            "/other.crt -days 2 -subj /CN=sp-other-ca",
    };
    for (const std::string& step : steps) {
      if (std::system((step + " >>" + d + "/openssl.log 2>&1").c_str()) != 0) {
        *why = "failed: " + step + "\n" + readFile(d + "/openssl.log");
        return false;
      }
    }
    return true;
  }

  bool spawn(std::string* why) {
    std::vector<std::string> args = {SP_REDIS_SERVER,
                                     "--port",
                                     std::to_string(port_),
                                     "--bind",
                                     "127.0.0.1",
                                     "--unixsocket",
                                     unixPath(),
                                     "--tls-port",
                                     std::to_string(tls_port_),
                                     "--tls-cert-file",
                                     path("server.crt"),
                                     "--tls-key-file",
                                     path("server.key"),
                                     "--tls-ca-cert-file",
                                     path("ca.crt"),
                                     "--tls-auth-clients",
                                     "no",
                                     "--dir",
                                     dir_,
                                     "--save",
                                     "",
                                     "--appendonly",
                                     "no",
                                     "--daemonize",
                                     "no",
                                     "--logfile",
                                     path("redis.log")};
    std::vector<char*> argv;
    for (std::string& a : args) {
      argv.push_back(a.data());
    }
    argv.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ < 0) {
      *why = "fork failed";
      return false;
    }
    if (pid_ == 0) {
      const int out = ::open((dir_ + "/stdout.log").c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (out >= 0) {
        ::dup2(out, 1);
        ::dup2(out, 2);
      }
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    return true;
  }

  // Every listener is bound before redis-server answers its first command, so a PING answered on
  // the plain port means the TLS port and the socket are up too.
  bool waitReady(std::string* why) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        *why = "redis-server exited (status " + std::to_string(status) + ")";
        return false;
      }
      BlockingClient c(BlockingClient::Options{});
      if (c.connect("127.0.0.1", port_)) {
        Reply pong = c.command({"PING"});
        if (pong && pong->type == REDIS_REPLY_STATUS) {
          return true;
        }
      }
      std::this_thread::sleep_for(milliseconds(20));
    }
    *why = "redis-server did not answer on port " + std::to_string(port_);
    return false;
  }

  void stop() {
    if (pid_ <= 0) {
      return;
    }
    ::kill(pid_, SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    int status = 0;
    while (::waitpid(pid_, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        break;
      }
      std::this_thread::sleep_for(milliseconds(10));
    }
    pid_ = -1;
  }

  std::string dir_;
  uint16_t port_ = 0;
  uint16_t tls_port_ = 0;
  pid_t pid_ = -1;
};

class BlockingClientTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new TestServer();
    start_error_.clear();
    if (!server_->start(&start_error_) && start_error_.empty()) {
      start_error_ = "unknown";
    }
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  void SetUp() override {
    ASSERT_TRUE(start_error_.empty()) << "cannot start " << SP_REDIS_SERVER << ": " << start_error_;
  }

  // Timeouts far above anything a loaded machine needs: these tests never wait for them.
  static BlockingClient::Options options(std::shared_ptr<const tls::TlsContext> tls = nullptr) {
    return BlockingClient::Options{std::chrono::seconds(30), std::chrono::seconds(30),
                                   std::move(tls)};
  }

  // A client context trusting `ca` ("ca.crt": the server's CA), verifying by default.
  static std::shared_ptr<const tls::TlsContext> clientTls(const char* ca,
                                                          std::string server_name = "") {
    tls::ClientSettings settings;
    settings.ca_cert_file = server_->path(ca);
    settings.server_name = std::move(server_name);
    std::shared_ptr<const tls::TlsContext> context;
    const Status made = tls::TlsContext::makeClient(settings, &context);
    EXPECT_TRUE(made.ok()) << made.message();
    return context;
  }

  static std::string text(const Reply& r) {
    return r && r->str != nullptr ? std::string(r->str, r->len) : std::string();
  }

  static TestServer* server_;
  static std::string start_error_;
};

TestServer* BlockingClientTest::server_ = nullptr;
std::string BlockingClientTest::start_error_;

TEST_F(BlockingClientTest, PlainCommandRoundTrip) {
  BlockingClient c(options());
  ASSERT_TRUE(c.connect("127.0.0.1", server_->port())) << c.error();
  const std::string value("a b\0\r\nc", 7);  // one binary-safe argument
  Reply set = c.command({"SET", "bc:plain", value});
  ASSERT_TRUE(set) << c.error();
  EXPECT_EQ(set->type, REDIS_REPLY_STATUS);
  EXPECT_EQ(text(set), "OK");
  Reply get = c.command({"GET", "bc:plain"});
  ASSERT_TRUE(get) << c.error();
  EXPECT_EQ(get->type, REDIS_REPLY_STRING);
  EXPECT_EQ(text(get), value);
  Reply del = c.command({"DEL", "bc:plain"});
  ASSERT_TRUE(del) << c.error();
  EXPECT_EQ(del->type, REDIS_REPLY_INTEGER);
  EXPECT_EQ(del->integer, 1);
  EXPECT_TRUE(c.connected());
}

TEST_F(BlockingClientTest, ErrorReplyIsAReplyAndTheConnectionStaysUsable) {
  BlockingClient c(options());
  ASSERT_TRUE(c.connect("localhost", server_->port())) << c.error();
  Reply err = c.command({"NOSUCHCOMMAND", "x"});
  ASSERT_TRUE(err) << c.error();
  EXPECT_EQ(err->type, REDIS_REPLY_ERROR);
  EXPECT_EQ(text(err).rfind("ERR unknown command", 0), 0u) << text(err);
  EXPECT_TRUE(c.connected());
  EXPECT_EQ(text(c.command({"PING"})), "PONG");
}

TEST_F(BlockingClientTest, ConnectionRefusedSaysSo) {
  const uint16_t closed = freeLoopbackPort();  // nothing listens there
  ASSERT_NE(closed, 0);
  BlockingClient c(options());
  EXPECT_FALSE(c.connect("127.0.0.1", closed));
  EXPECT_NE(c.error().find("Connection refused"), std::string::npos) << c.error();
  EXPECT_FALSE(c.connected());
  EXPECT_FALSE(c.command({"PING"}));
}

TEST_F(BlockingClientTest, UnixSocket) {
  BlockingClient c(options());
  ASSERT_TRUE(c.connectUnix(server_->unixPath())) << c.error();
  EXPECT_EQ(text(c.command({"PING"})), "PONG");
}

TEST_F(BlockingClientTest, NextReplyReadsPushedMessages) {
  BlockingClient sub(options());
  ASSERT_TRUE(sub.connect("127.0.0.1", server_->port())) << sub.error();
  Reply ack = sub.command({"SUBSCRIBE", "bc:channel"});
  ASSERT_TRUE(ack) << sub.error();
  ASSERT_EQ(ack->type, REDIS_REPLY_ARRAY);

  // Nothing was published: no reply, and the connection is still usable.
  Reply none;
  EXPECT_EQ(sub.nextReply(milliseconds(0), &none), BlockingClient::ReadResult::kTimeout);
  EXPECT_FALSE(none);
  EXPECT_TRUE(sub.connected());

  BlockingClient pub(options());
  ASSERT_TRUE(pub.connect("127.0.0.1", server_->port())) << pub.error();
  for (const char* message : {"one", "two"}) {
    Reply receivers = pub.command({"PUBLISH", "bc:channel", message});
    ASSERT_TRUE(receivers) << pub.error();
    EXPECT_EQ(receivers->integer, 1);
  }
  for (const char* message : {"one", "two"}) {
    Reply msg;
    ASSERT_EQ(sub.nextReply(std::chrono::seconds(30), &msg), BlockingClient::ReadResult::kReply)
        << sub.error();
    ASSERT_EQ(msg->type, REDIS_REPLY_ARRAY);
    ASSERT_EQ(msg->elements, 3u);
    EXPECT_EQ(std::string(msg->element[0]->str, msg->element[0]->len), "message");
    EXPECT_EQ(std::string(msg->element[2]->str, msg->element[2]->len), message);
  }
}

TEST_F(BlockingClientTest, NextReplyReportsAClosedConnection) {
  BlockingClient c(options());
  ASSERT_TRUE(c.connect("127.0.0.1", server_->port())) << c.error();
  ASSERT_TRUE(c.send({"QUIT"}));
  Reply ok;
  ASSERT_EQ(c.nextReply(std::chrono::seconds(30), &ok), BlockingClient::ReadResult::kReply);
  EXPECT_EQ(text(ok), "OK");
  Reply none;
  EXPECT_EQ(c.nextReply(std::chrono::seconds(30), &none), BlockingClient::ReadResult::kFailed);
  EXPECT_NE(c.error().find("closed"), std::string::npos) << c.error();
  EXPECT_FALSE(c.connected());
}

TEST_F(BlockingClientTest, TlsRoundTripByAddressAndByName) {
  for (const char* host : {"127.0.0.1", "localhost"}) {
    BlockingClient c(options(clientTls("ca.crt")));
    ASSERT_TRUE(c.connect(host, server_->tlsPort())) << host << ": " << c.error();
    Reply set = c.command({"SET", "bc:tls", host});
    ASSERT_TRUE(set) << c.error();
    EXPECT_EQ(text(set), "OK");
    EXPECT_EQ(text(c.command({"GET", "bc:tls"})), host);
    Reply info = c.command({"INFO", "server"});
    ASSERT_TRUE(info) << c.error();
    EXPECT_NE(text(info).find("redis_version:"), std::string::npos);
  }
}

TEST_F(BlockingClientTest, TlsWithAnotherCaFailsVerification) {
  BlockingClient c(options(clientTls("other.crt")));
  EXPECT_FALSE(c.connect("127.0.0.1", server_->tlsPort()));
  EXPECT_NE(c.error().find("TLS handshake failed"), std::string::npos) << c.error();
  EXPECT_NE(c.error().find("certificate verify failed"), std::string::npos) << c.error();
  EXPECT_FALSE(c.connected());
}

TEST_F(BlockingClientTest, TlsChecksTheServerName) {
  BlockingClient c(options(clientTls("ca.crt", "wrong.example")));
  EXPECT_FALSE(c.connect("127.0.0.1", server_->tlsPort()));
  EXPECT_NE(c.error().find("certificate verify failed"), std::string::npos) << c.error();
  EXPECT_NE(c.error().find("hostname mismatch"), std::string::npos) << c.error();
}

TEST_F(BlockingClientTest, TlsWithoutVerificationAcceptsAnyCertificate) {
  tls::ClientSettings settings;
  settings.ca_cert_file = server_->path("other.crt");
  settings.verify = false;
  std::shared_ptr<const tls::TlsContext> context;
  const Status made = tls::TlsContext::makeClient(settings, &context);
  ASSERT_TRUE(made.ok()) << made.message();
  BlockingClient c(options(context));
  ASSERT_TRUE(c.connect("127.0.0.1", server_->tlsPort())) << c.error();
  EXPECT_EQ(text(c.command({"PING"})), "PONG");
}

}  // namespace
}  // namespace sp::route
