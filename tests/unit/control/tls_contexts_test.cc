// buildTlsContexts: a context for each side the config turns on (tls.listen, backend.tls) and
// none for the other, and an error that names the side and the file at fault, leaving the
// contexts the caller had untouched.
#include "control/tls_contexts.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "config/config.h"
#include "tls/tls_context.h"

namespace sp::control {
namespace {

constexpr const char* kMissing = "/nonexistent/shardproxy-test/missing.pem";

TEST(TlsContextsTest, APlainConfigBuildsNoContext) {
  TlsContexts built;
  const Status status = buildTlsContexts(config::Config{}, &built);
  const std::string& error = status.message();
  ASSERT_TRUE(status.ok()) << error;
  EXPECT_EQ(built.server, nullptr);
  EXPECT_EQ(built.backend, nullptr);
}

TEST(TlsContextsTest, BackendTlsBuildsAVerifyingClientContextOnly) {
  config::Config config;
  config.backend_tls = true;  // the system's CA store
  config.backend_tls_client.server_name = "redis.internal";
  TlsContexts built;
  const Status status = buildTlsContexts(config, &built);
  const std::string& error = status.message();
  ASSERT_TRUE(status.ok()) << error;
  EXPECT_EQ(built.server, nullptr);
  ASSERT_NE(built.backend, nullptr);
  EXPECT_FALSE(built.backend->isServer());
  EXPECT_TRUE(built.backend->verifyPeer());
  EXPECT_EQ(built.backend->serverName(), "redis.internal");
}

TEST(TlsContextsTest, ListenerSettingsAreNotReadWithoutTlsListen) {
  config::Config config;
  config.tls_server.cert_file = kMissing;
  config.tls_server.key_file = kMissing;
  TlsContexts built;
  const Status status = buildTlsContexts(config, &built);
  const std::string& error = status.message();
  EXPECT_TRUE(status.ok()) << error;
  EXPECT_EQ(built.server, nullptr);
}

TEST(TlsContextsTest, AnUnreadableListenerCertificateIsAnErrorUnderTls) {
  config::Config config;
  config.tls_port = 6443;
  config.tls_server.cert_file = kMissing;
  config.tls_server.key_file = kMissing;
  TlsContexts built;
  const Status status = buildTlsContexts(config, &built);
  const std::string& error = status.message();
  EXPECT_FALSE(status.ok());
  EXPECT_TRUE(error.starts_with("tls: ")) << error;
  EXPECT_NE(error.find(kMissing), std::string::npos) << error;
}

TEST(TlsContextsTest, AnUnreadableBackendCaIsAnErrorUnderBackendTls) {
  config::Config config;
  config.backend_tls = true;
  config.backend_tls_client.ca_cert_file = kMissing;
  TlsContexts built;
  const Status status = buildTlsContexts(config, &built);
  const std::string& error = status.message();
  EXPECT_FALSE(status.ok());
  EXPECT_TRUE(error.starts_with("backend.tls: ")) << error;
  EXPECT_NE(error.find(kMissing), std::string::npos) << error;
}

TEST(TlsContextsTest, AFailureLeavesTheCallersContextsAsTheyWere) {
  config::Config good;
  good.backend_tls = true;
  TlsContexts running;
  const Status first = buildTlsContexts(good, &running);
  ASSERT_TRUE(first.ok()) << first.message();
  const auto backend = running.backend;

  config::Config bad = good;
  bad.backend_tls_client.protocols = "TLSv9";
  const Status second = buildTlsContexts(bad, &running);
  EXPECT_FALSE(second.ok());
  EXPECT_TRUE(second.message().starts_with("backend.tls: ")) << second.message();
  EXPECT_EQ(running.backend, backend);
}

}  // namespace
}  // namespace sp::control
