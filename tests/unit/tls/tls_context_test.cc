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

// What a context that could not be built says; a failure must leave no context behind.
std::string failureOfServer(const ServerSettings& settings) {
  std::shared_ptr<const TlsContext> context;
  const Status made = TlsContext::makeServer(settings, &context);
  EXPECT_FALSE(made.ok());
  EXPECT_EQ(context, nullptr);
  return made.message();
}

std::string failureOfClient(const ClientSettings& settings) {
  std::shared_ptr<const TlsContext> context;
  const Status made = TlsContext::makeClient(settings, &context);
  EXPECT_FALSE(made.ok());
  EXPECT_EQ(context, nullptr);
  return made.message();
}

ServerSettings validServer() {
  ServerSettings s;
  s.cert_file = testCerts().serverCert();
  s.key_file = testCerts().serverKey();
  return s;
}

TEST(TlsContextTest, ServerAndClientFromValidSettings) {
  ASSERT_EQ(testCerts().error, "");
  std::shared_ptr<const TlsContext> server;
  const Status server_made = TlsContext::makeServer(validServer(), &server);
  ASSERT_TRUE(server_made.ok()) << server_made.message();
  EXPECT_TRUE(server->isServer());
  EXPECT_FALSE(server->verifyPeer());
  EXPECT_NE(server->native(), nullptr);

  ServerSettings asking = validServer();
  asking.ca_cert_file = testCerts().caCert();
  asking.auth_clients = AuthClients::kYes;
  std::shared_ptr<const TlsContext> verifying;
  const Status verifying_made = TlsContext::makeServer(asking, &verifying);
  ASSERT_TRUE(verifying_made.ok()) << verifying_made.message();
  EXPECT_TRUE(verifying->verifyPeer());

  ClientSettings c;
  c.ca_cert_file = testCerts().caCert();
  c.cert_file = testCerts().clientCert();
  c.key_file = testCerts().clientKey();
  c.server_name = "redis.example";
  std::shared_ptr<const TlsContext> client;
  const Status client_made = TlsContext::makeClient(c, &client);
  ASSERT_TRUE(client_made.ok()) << client_made.message();
  EXPECT_FALSE(client->isServer());
  EXPECT_TRUE(client->verifyPeer());
  EXPECT_EQ(client->serverName(), "redis.example");

  c.verify = false;
  std::shared_ptr<const TlsContext> trusting;
  const Status trusting_made = TlsContext::makeClient(c, &trusting);
  ASSERT_TRUE(trusting_made.ok()) << trusting_made.message();
  EXPECT_FALSE(trusting->verifyPeer());
}

TEST(TlsContextTest, ClientWithTheSystemStore) {
  std::shared_ptr<const TlsContext> client;
  const Status client_made = TlsContext::makeClient(ClientSettings{}, &client);
  ASSERT_TRUE(client_made.ok()) << client_made.message();
  EXPECT_EQ(client->serverName(), "");
}

TEST(TlsContextTest, AMissingCertificateFileIsNamed) {
  ServerSettings s = validServer();
  s.cert_file = testCerts().path("no-such.crt");
  std::string error = failureOfServer(s);
  EXPECT_TRUE(contains(error, s.cert_file)) << error;
  EXPECT_TRUE(contains(error, "certificate")) << error;

  ClientSettings c;
  c.cert_file = testCerts().path("no-such-client.crt");
  c.key_file = testCerts().clientKey();
  error = failureOfClient(c);
  EXPECT_TRUE(contains(error, c.cert_file)) << error;
}

TEST(TlsContextTest, AMissingKeyFileIsNamed) {
  ServerSettings s = validServer();
  s.key_file = testCerts().path("no-such.key");
  std::string error = failureOfServer(s);
  EXPECT_TRUE(contains(error, s.key_file)) << error;
  EXPECT_TRUE(contains(error, "private key")) << error;
}

TEST(TlsContextTest, AMissingCaFileIsNamed) {
  ServerSettings s = validServer();
  s.ca_cert_file = testCerts().path("no-such-ca.crt");
  std::string error = failureOfServer(s);
  EXPECT_TRUE(contains(error, s.ca_cert_file)) << error;

  ClientSettings c;
  c.ca_cert_file = testCerts().path("no-such-ca.crt");
  error = failureOfClient(c);
  EXPECT_TRUE(contains(error, c.ca_cert_file)) << error;
}

TEST(TlsContextTest, AFileThatIsNotPemIsNamed) {
  const std::string junk = testCerts().path("junk.crt");
  std::ofstream(junk) << "not a certificate\n";
  ServerSettings s = validServer();
  s.cert_file = junk;
  std::string error = failureOfServer(s);
  EXPECT_TRUE(contains(error, junk)) << error;
}

TEST(TlsContextTest, AKeyThatDoesNotMatchItsCertificate) {
  ServerSettings s = validServer();
  s.key_file = testCerts().clientKey();
  std::string error = failureOfServer(s);
  EXPECT_TRUE(contains(error, "does not match")) << error;
  EXPECT_TRUE(contains(error, s.key_file)) << error;
  EXPECT_TRUE(contains(error, s.cert_file)) << error;

  ClientSettings c;
  c.cert_file = testCerts().clientCert();
  c.key_file = testCerts().serverKey();
  error = failureOfClient(c);
  EXPECT_TRUE(contains(error, "does not match")) << error;
}

TEST(TlsContextTest, AClientCertificateNeedsItsKey) {
  ClientSettings c;
  c.cert_file = testCerts().clientCert();
  std::string error = failureOfClient(c);
  EXPECT_TRUE(contains(error, "key_file")) << error;
  c.cert_file.clear();
  c.key_file = testCerts().clientKey();
  error = failureOfClient(c);
  EXPECT_TRUE(contains(error, "cert_file")) << error;
}

TEST(TlsContextTest, AnUnknownProtocolIsRefused) {
  for (const char* bad : {"TLSv1.1", "TLSv1.4", "SSLv3", "TLSv1.2,TLSv1.3", "   "}) {
    SCOPED_TRACE(bad);
    ServerSettings s = validServer();
    s.protocols = bad;
    std::string error = failureOfServer(s);
    EXPECT_TRUE(contains(error, "protocols")) << error;
    EXPECT_TRUE(contains(error, bad)) << error;

    ClientSettings c;
    c.protocols = bad;
    error = failureOfClient(c);
    EXPECT_TRUE(contains(error, "protocols")) << error;
  }
}

TEST(TlsContextTest, BadCipherListsAreNamed) {
  ServerSettings s = validServer();
  s.ciphers = "NO-SUCH-CIPHER";
  std::string error = failureOfServer(s);
  EXPECT_TRUE(contains(error, "NO-SUCH-CIPHER")) << error;
  s = validServer();
  s.ciphersuites = "TLS_NO_SUCH_SUITE";
  error = failureOfServer(s);
  EXPECT_TRUE(contains(error, "TLS_NO_SUCH_SUITE")) << error;
}

TEST(TlsContextTest, AuthClientsNeedsACa) {
  for (AuthClients mode : {AuthClients::kYes, AuthClients::kOptional}) {
    ServerSettings s = validServer();
    s.auth_clients = mode;
    std::string error = failureOfServer(s);
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
