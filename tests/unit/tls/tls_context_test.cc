// TlsContext: server and client contexts from valid settings, and each setting at fault named in
// the error (a missing or unreadable file, a key that does not match its certificate, an unknown
// protocol, auth_clients without a CA); parseProtocols over Redis's tls-protocols syntax.
#include "tls/tls_context.h"

#include <gtest/gtest.h>
#include <openssl/ssl.h>

#include <fstream>
#include <string>
#include <string_view>

#include "unit/tls/test_certs.h"

namespace sp::tls {
namespace {

using testing::testCerts;

bool contains(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

ServerSettings validServer() {
  ServerSettings s;
  s.cert_file = testCerts().serverCert();
  s.key_file = testCerts().serverKey();
  return s;
}

TEST(TlsContextTest, ServerAndClientFromValidSettings) {
  ASSERT_EQ(testCerts().error, "");
  std::string error;
  auto server = TlsContext::makeServer(validServer(), &error);
  ASSERT_NE(server, nullptr) << error;
  EXPECT_TRUE(server->isServer());
  EXPECT_FALSE(server->verifyPeer());
  EXPECT_NE(server->native(), nullptr);

  ServerSettings asking = validServer();
  asking.ca_cert_file = testCerts().caCert();
  asking.auth_clients = AuthClients::kYes;
  auto verifying = TlsContext::makeServer(asking, &error);
  ASSERT_NE(verifying, nullptr) << error;
  EXPECT_TRUE(verifying->verifyPeer());

  ClientSettings c;
  c.ca_cert_file = testCerts().caCert();
  c.cert_file = testCerts().clientCert();
  c.key_file = testCerts().clientKey();
  c.server_name = "redis.example";
  auto client = TlsContext::makeClient(c, &error);
  ASSERT_NE(client, nullptr) << error;
  EXPECT_FALSE(client->isServer());
  EXPECT_TRUE(client->verifyPeer());
  EXPECT_EQ(client->serverName(), "redis.example");

  c.verify = false;
  auto trusting = TlsContext::makeClient(c, &error);
  ASSERT_NE(trusting, nullptr) << error;
  EXPECT_FALSE(trusting->verifyPeer());
}

TEST(TlsContextTest, ClientWithTheSystemStore) {
  std::string error;
  auto client = TlsContext::makeClient(ClientSettings{}, &error);
  ASSERT_NE(client, nullptr) << error;
  EXPECT_EQ(client->serverName(), "");
}

TEST(TlsContextTest, AMissingCertificateFileIsNamed) {
  ServerSettings s = validServer();
  s.cert_file = testCerts().path("no-such.crt");
  std::string error;
  EXPECT_EQ(TlsContext::makeServer(s, &error), nullptr);
  EXPECT_TRUE(contains(error, s.cert_file)) << error;
  EXPECT_TRUE(contains(error, "certificate")) << error;

  ClientSettings c;
  c.cert_file = testCerts().path("no-such-client.crt");
  c.key_file = testCerts().clientKey();
  error.clear();
  EXPECT_EQ(TlsContext::makeClient(c, &error), nullptr);
  EXPECT_TRUE(contains(error, c.cert_file)) << error;
}

TEST(TlsContextTest, AMissingKeyFileIsNamed) {
  ServerSettings s = validServer();
  s.key_file = testCerts().path("no-such.key");
  std::string error;
  EXPECT_EQ(TlsContext::makeServer(s, &error), nullptr);
  EXPECT_TRUE(contains(error, s.key_file)) << error;
  EXPECT_TRUE(contains(error, "private key")) << error;
}

TEST(TlsContextTest, AMissingCaFileIsNamed) {
  ServerSettings s = validServer();
  s.ca_cert_file = testCerts().path("no-such-ca.crt");
  std::string error;
  EXPECT_EQ(TlsContext::makeServer(s, &error), nullptr);
  EXPECT_TRUE(contains(error, s.ca_cert_file)) << error;

  ClientSettings c;
  c.ca_cert_file = testCerts().path("no-such-ca.crt");
  error.clear();
  EXPECT_EQ(TlsContext::makeClient(c, &error), nullptr);
  EXPECT_TRUE(contains(error, c.ca_cert_file)) << error;
}

TEST(TlsContextTest, AFileThatIsNotPemIsNamed) {
  const std::string junk = testCerts().path("junk.crt");
  std::ofstream(junk) << "not a certificate\n";
  ServerSettings s = validServer();
  s.cert_file = junk;
  std::string error;
  EXPECT_EQ(TlsContext::makeServer(s, &error), nullptr);
  EXPECT_TRUE(contains(error, junk)) << error;
}

TEST(TlsContextTest, AKeyThatDoesNotMatchItsCertificate) {
  ServerSettings s = validServer();
  s.key_file = testCerts().clientKey();
  std::string error;
  EXPECT_EQ(TlsContext::makeServer(s, &error), nullptr);
  EXPECT_TRUE(contains(error, "does not match")) << error;
  EXPECT_TRUE(contains(error, s.key_file)) << error;
  EXPECT_TRUE(contains(error, s.cert_file)) << error;

  ClientSettings c;
  c.cert_file = testCerts().clientCert();
  c.key_file = testCerts().serverKey();
  error.clear();
  EXPECT_EQ(TlsContext::makeClient(c, &error), nullptr);
  EXPECT_TRUE(contains(error, "does not match")) << error;
}

TEST(TlsContextTest, AClientCertificateNeedsItsKey) {
  ClientSettings c;
  c.cert_file = testCerts().clientCert();
  std::string error;
  EXPECT_EQ(TlsContext::makeClient(c, &error), nullptr);
  EXPECT_TRUE(contains(error, "key_file")) << error;
  c.cert_file.clear();
  c.key_file = testCerts().clientKey();
  error.clear();
  EXPECT_EQ(TlsContext::makeClient(c, &error), nullptr);
  EXPECT_TRUE(contains(error, "cert_file")) << error;
}

TEST(TlsContextTest, AnUnknownProtocolIsRefused) {
  for (const char* bad : {"TLSv1.1", "TLSv1.4", "SSLv3", "TLSv1.2,TLSv1.3", "   "}) {
    ServerSettings s = validServer();
    s.protocols = bad;
    std::string error;
    EXPECT_EQ(TlsContext::makeServer(s, &error), nullptr) << bad;
    EXPECT_TRUE(contains(error, "protocols")) << error;
    EXPECT_TRUE(contains(error, bad)) << error;

    ClientSettings c;
    c.protocols = bad;
    error.clear();
    EXPECT_EQ(TlsContext::makeClient(c, &error), nullptr) << bad;
    EXPECT_TRUE(contains(error, "protocols")) << error;
  }
}

TEST(TlsContextTest, BadCipherListsAreNamed) {
  ServerSettings s = validServer();
  s.ciphers = "NO-SUCH-CIPHER";
  std::string error;
  EXPECT_EQ(TlsContext::makeServer(s, &error), nullptr);
  EXPECT_TRUE(contains(error, "NO-SUCH-CIPHER")) << error;
  s = validServer();
  s.ciphersuites = "TLS_NO_SUCH_SUITE";
  error.clear();
  EXPECT_EQ(TlsContext::makeServer(s, &error), nullptr);
  EXPECT_TRUE(contains(error, "TLS_NO_SUCH_SUITE")) << error;
}

TEST(TlsContextTest, AuthClientsNeedsACa) {
  for (AuthClients mode : {AuthClients::kYes, AuthClients::kOptional}) {
    ServerSettings s = validServer();
    s.auth_clients = mode;
    std::string error;
    EXPECT_EQ(TlsContext::makeServer(s, &error), nullptr);
    EXPECT_TRUE(contains(error, "auth_clients")) << error;
    EXPECT_TRUE(contains(error, "ca_cert_file")) << error;
  }
}

TEST(ParseProtocolsTest, RedisSyntax) {
  int lo = 0;
  int hi = 0;
  ASSERT_TRUE(parseProtocols("TLSv1.2", &lo, &hi));
  EXPECT_EQ(lo, TLS1_2_VERSION);
  EXPECT_EQ(hi, TLS1_2_VERSION);
  ASSERT_TRUE(parseProtocols("TLSv1.3", &lo, &hi));
  EXPECT_EQ(lo, TLS1_3_VERSION);
  EXPECT_EQ(hi, TLS1_3_VERSION);
  ASSERT_TRUE(parseProtocols("TLSv1.2 TLSv1.3", &lo, &hi));
  EXPECT_EQ(lo, TLS1_2_VERSION);
  EXPECT_EQ(hi, TLS1_3_VERSION);
  // Any order, repeated names and extra spaces.
  lo = hi = 0;
  ASSERT_TRUE(parseProtocols("  TLSv1.3   TLSv1.2 TLSv1.3 ", &lo, &hi));
  EXPECT_EQ(lo, TLS1_2_VERSION);
  EXPECT_EQ(hi, TLS1_3_VERSION);
  ASSERT_TRUE(parseProtocols("tlsv1.3", &lo, &hi));  // any case, as redis-server takes them
  EXPECT_EQ(lo, TLS1_3_VERSION);
  EXPECT_EQ(hi, TLS1_3_VERSION);
}

TEST(ParseProtocolsTest, RefusedLeavesTheOutputsAlone) {
  for (const char* bad :
       {"", " ", "TLSv1", "TLSv1.1", "TLSv1.2 TLSv1.1", "TLSv1.2,TLSv1.3", "TLSv1.2x", "SSLv3"}) {
    int lo = -1;
    int hi = -1;
    EXPECT_FALSE(parseProtocols(bad, &lo, &hi)) << "'" << bad << "'";
    EXPECT_EQ(lo, -1) << bad;
    EXPECT_EQ(hi, -1) << bad;
  }
}

}  // namespace
}  // namespace sp::tls
