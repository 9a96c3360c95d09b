// Tests for config/loader.cc: buildConfig (file + flags + validate) and loadAndValidateYaml,
// including several errors reported at once and validator messages that repeat loader errors
// being left out.
#include "config/loader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <initializer_list>
#include <string>
#include <vector>

#include "config_errors.h"

namespace sp::config {
namespace {

using test::countPath;
using test::dump;
using test::hasError;

class TempYaml {
 public:
  explicit TempYaml(const std::string& text) {
    static int counter = 0;
    path_ = ::testing::TempDir() + "loader_test_" + std::to_string(::getpid()) + "_" +
            std::to_string(counter++) + ".yaml";
    std::ofstream(path_) << text;
  }
  ~TempYaml() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

constexpr const char* kTwoShards = R"(
listen:
  host: 10.0.0.1
  port: 7000
workers: 2
shards:
  - address: 127.0.0.1:7001
  - address: 127.0.0.1:7002
log_level: warn
)";

std::vector<ConfigError> build(std::initializer_list<const char*> args, Config* out) {
  std::vector<const char*> argv = {"shardproxy"};
  argv.insert(argv.end(), args.begin(), args.end());
  CommandLine cl;
  auto errors = parseCommandLine(static_cast<int>(argv.size()), argv.data(), &cl);
  EXPECT_TRUE(errors.empty()) << dump(errors);
  return buildConfig(cl, out);
}

TEST(BuildConfigTest, FileAlone) {
  TempYaml file(kTwoShards);
  Config c;
  auto errors = build({"--config", file.path().c_str()}, &c);
  ASSERT_TRUE(errors.empty()) << dump(errors);
  EXPECT_EQ(c.listen_host, "10.0.0.1");
  EXPECT_EQ(c.listen_port, 7000);
  EXPECT_EQ(c.workers, 2);
  ASSERT_EQ(c.shards.size(), 2u);
  EXPECT_EQ(c.log_level, "warn");
}

TEST(BuildConfigTest, FlagsOverrideTheFile) {
  TempYaml file(kTwoShards);
  Config c;
  auto errors =
      build({"-c", file.path().c_str(), "--listen", "[::1]:7100", "--workers", "0", "--shards",
             "127.0.0.1:8001,127.0.0.1:8002,127.0.0.1:8003", "--log-level", "error"},
            &c);
  ASSERT_TRUE(errors.empty()) << dump(errors);
  EXPECT_EQ(c.listen_host, "::1");
  EXPECT_EQ(c.listen_port, 7100);
  EXPECT_EQ(c.workers, 0);
  ASSERT_EQ(c.shards.size(), 3u);  // --shards replaces the file's list
  EXPECT_EQ(c.shards[0].port, 8001);
  EXPECT_EQ(c.shards[2].name, "shard2");
  EXPECT_EQ(c.log_level, "error");
  // Untouched keys keep the file's values.
  errors = build({"-c", file.path().c_str(), "--port", "7200"}, &c);
  ASSERT_TRUE(errors.empty()) << dump(errors);
  EXPECT_EQ(c.listen_host, "10.0.0.1");
  EXPECT_EQ(c.listen_port, 7200);
  EXPECT_EQ(c.workers, 2);
}

TEST(BuildConfigTest, FlagsOnly) {
  Config c;
  auto errors = build({"--shards", "127.0.0.1:7001,[::1]:7002", "--port", "6400"}, &c);
  ASSERT_TRUE(errors.empty()) << dump(errors);
  EXPECT_EQ(c.listen_host, Config{}.listen_host);
  EXPECT_EQ(c.listen_port, 6400);
  ASSERT_EQ(c.shards.size(), 2u);
  EXPECT_EQ(c.shards[1].host, "::1");
  EXPECT_EQ(c.shards[1].port, 7002);
}

TEST(BuildConfigTest, UnixListenerAloneOrBesideTcp) {
  TempYaml file(R"(
listen:
  port: 0
  unix: /run/shardproxy.sock
  unix_perm: "0770"
shards:
  - address: /run/redis/a.sock
  - address: unix:/run/redis/b.sock
)");
  Config c;
  auto errors = build({"--config", file.path().c_str()}, &c);
  ASSERT_TRUE(errors.empty()) << dump(errors);
  EXPECT_EQ(c.listen_port, 0);
  EXPECT_EQ(c.listen_unix, "/run/shardproxy.sock");
  EXPECT_EQ(c.listen_unix_perm, 0770u);
  EXPECT_EQ(c.shards[0].host, "/run/redis/a.sock");
  EXPECT_EQ(c.shards[1].host, "/run/redis/b.sock");
  errors =
      build({"--shards", "127.0.0.1:7001", "--listen", "unix:/tmp/a.sock", "--port", "7000"}, &c);
  ASSERT_TRUE(errors.empty()) << dump(errors);
  EXPECT_EQ(c.listen_port, 7000);
  EXPECT_EQ(c.listen_unix, "/tmp/a.sock");
}

TEST(BuildConfigTest, UnixListenerErrors) {
  TempYaml no_listener("listen:\n  port: 0\nshards:\n  - address: 127.0.0.1:7001\n");
  Config c;
  auto errors = build({"--config", no_listener.path().c_str()}, &c);
  EXPECT_TRUE(hasError(errors, "listen.port", "listen.unix or tls.listen must name another"))
      << dump(errors);
  TempYaml relative(
      "listen:\n  unix: sp.sock\n  unix_perm: 1777\nshards:\n  - address: /a.sock\n"
      "  - address: unix:/a.sock\n");
  errors = build({"--config", relative.path().c_str()}, &c);
  EXPECT_TRUE(hasError(errors, "listen.unix", "expected an absolute path")) << dump(errors);
  EXPECT_TRUE(hasError(errors, "listen.unix_perm", "octal file mode")) << dump(errors);
  EXPECT_TRUE(hasError(errors, "shards[1].address", "duplicate address unix:/a.sock"))
      << dump(errors);
}

TEST(BuildConfigTest, TlsKeysAndFlags) {
  TempYaml file(
      "listen:\n  port: 0\nshards:\n  - address: 127.0.0.1:7001\n"
      "tls:\n  listen: 7443\n  cert_file: /etc/sp/proxy.crt\n  key_file: /etc/sp/proxy.key\n"
      "  ca_cert_file: /etc/sp/ca.crt\n  auth_clients: optional\n"
      "  protocols: TLSv1.2 TLSv1.3\n  ciphersuites: TLS_AES_128_GCM_SHA256\n"
      "backend:\n  tls:\n    enabled: true\n    ca_cert_file: /etc/sp/ca.crt\n"
      "    server_name: redis.internal\n    verify: false\n");
  Config c;
  auto errors = build({"--config", file.path().c_str()}, &c);
  ASSERT_TRUE(errors.empty()) << dump(errors);
  EXPECT_EQ(c.tls_port, 7443);
  EXPECT_EQ(c.tls_host, "");  // listen.host's
  EXPECT_EQ(c.tls_server.cert_file, "/etc/sp/proxy.crt");
  EXPECT_EQ(c.tls_server.key_file, "/etc/sp/proxy.key");
  EXPECT_EQ(c.tls_server.ca_cert_file, "/etc/sp/ca.crt");
  EXPECT_EQ(c.tls_server.auth_clients, tls::AuthClients::kOptional);
  EXPECT_EQ(c.tls_server.protocols, "TLSv1.2 TLSv1.3");
  EXPECT_EQ(c.tls_server.ciphersuites, "TLS_AES_128_GCM_SHA256");
  EXPECT_TRUE(c.backend_tls);
  EXPECT_EQ(c.backend_tls_client.ca_cert_file, "/etc/sp/ca.crt");
  EXPECT_EQ(c.backend_tls_client.server_name, "redis.internal");
  EXPECT_FALSE(c.backend_tls_client.verify);

  // Flags win over the file, one by one.
  errors = build({"--config", file.path().c_str(), "--tls-listen", "0.0.0.0:6443",
                  "--tls-cert-file", "/x.crt", "--tls-auth-clients", "yes",
                  "--backend-tls-cert-file", "/c.crt", "--backend-tls-key-file", "/c.key"},
                 &c);
  ASSERT_TRUE(errors.empty()) << dump(errors);
  EXPECT_EQ(c.tls_host, "0.0.0.0");
  EXPECT_EQ(c.tls_port, 6443);
  EXPECT_EQ(c.tls_server.cert_file, "/x.crt");
  EXPECT_EQ(c.tls_server.key_file, "/etc/sp/proxy.key");
  EXPECT_EQ(c.tls_server.auth_clients, tls::AuthClients::kYes);
  EXPECT_EQ(c.backend_tls_client.cert_file, "/c.crt");
  EXPECT_EQ(c.backend_tls_client.key_file, "/c.key");

  Config flags_only;
  errors = build({"--shards", "127.0.0.1:7001", "--backend-tls", "--backend-tls-no-verify",
                  "--backend-tls-server-name", "r.local"},
                 &flags_only);
  ASSERT_TRUE(errors.empty()) << dump(errors);
  EXPECT_TRUE(flags_only.backend_tls);
  EXPECT_FALSE(flags_only.backend_tls_client.verify);
  EXPECT_EQ(flags_only.backend_tls_client.server_name, "r.local");
  EXPECT_EQ(flags_only.tls_port, 0);
}

TEST(BuildConfigTest, TlsErrors) {
  TempYaml file(
      "listen:\n  port: 7000\nshards:\n  - address: 127.0.0.1:7001\n"
      "tls:\n  listen: 7000\n  auth_clients: always\n  protocols: SSLv3\n  cipher: x\n"
      "backend:\n  tls:\n    cert_file: /c.crt\n");
  Config c;
  auto errors = build({"--config", file.path().c_str()}, &c);
  EXPECT_TRUE(hasError(errors, "tls.auth_clients", "expected no, optional or yes")) << dump(errors);
  EXPECT_TRUE(hasError(errors, "tls.cipher", "unknown key (did you mean 'ciphers'?)"))
      << dump(errors);
  EXPECT_TRUE(hasError(errors, "tls.listen", "needs tls.cert_file and tls.key_file"))
      << dump(errors);
  EXPECT_TRUE(hasError(errors, "tls.listen", "plain and TLS listeners need two ports"))
      << dump(errors);
  EXPECT_TRUE(hasError(errors, "tls.protocols", "expected TLSv1.2 and/or TLSv1.3")) << dump(errors);
  EXPECT_TRUE(hasError(errors, "backend.tls", "needs both cert_file and key_file")) << dump(errors);

  TempYaml verify_without_ca(
      "shards:\n  - address: 127.0.0.1:7001\n"
      "tls:\n  listen: 7443\n  cert_file: /a\n  key_file: /b\n  auth_clients: yes\n");
  errors = build({"--config", verify_without_ca.path().c_str()}, &c);
  EXPECT_TRUE(hasError(errors, "tls.auth_clients", "needs tls.ca_cert_file")) << dump(errors);

  CommandLine cl;
  const char* argv[] = {"shardproxy", "--tls-listen", "host:", "--tls-auth-clients", "maybe"};
  errors = parseCommandLine(5, argv, &cl);
  EXPECT_TRUE(hasError(errors, "--tls-listen", "")) << dump(errors);
  EXPECT_TRUE(hasError(errors, "--tls-auth-clients", "expected no, optional or yes"))
      << dump(errors);
}

TEST(BuildConfigTest, FlagsOnlyWithoutShards) {
  Config c;
  auto errors = build({"--port", "6400"}, &c);
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  EXPECT_EQ(errors[0].toString(),
            "shards: at least one shard is required (use --shards or a config file)");
}

TEST(BuildConfigTest, CheckConfigValidatesTheSameWay) {
  TempYaml file("shards:\n  - address: 127.0.0.1:1\nlog_level: loud\n");
  CommandLine cl;
  const char* argv[] = {"shardproxy", "--check-config", file.path().c_str()};
  ASSERT_TRUE(parseCommandLine(3, argv, &cl).empty());
  ASSERT_TRUE(cl.check_config);
  Config c;
  auto errors = buildConfig(cl, &c);
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  EXPECT_TRUE(hasError(errors, "log_level", "unknown level 'loud'"));
}

TEST(BuildConfigTest, UnreadableOrUnparsableFileIsTheOnlyError) {
  Config c;
  auto errors = build({"--config", "/nonexistent/proxy.yaml"}, &c);
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  EXPECT_EQ(errors[0].path, "/nonexistent/proxy.yaml");

  TempYaml bad("shards: [\n");
  errors = build({"--config", bad.path().c_str()}, &c);
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  EXPECT_EQ(errors[0].path, bad.path());
  EXPECT_NE(errors[0].message.find("line 2"), std::string::npos) << errors[0].message;
}

TEST(BuildConfigTest, BadShardsFlagIsNotEchoedByValidation) {
  Config c;
  CommandLine cl;
  cl.shards = "foo,bar";
  auto errors = buildConfig(cl, &c);
  EXPECT_EQ(countPath(errors, "--shards"), 2u) << dump(errors);
  EXPECT_EQ(errors.size(), 2u) << dump(errors);
  cl = CommandLine{};
  cl.shards = "127.0.0.1:1";
  cl.port = 70000;  // set programmatically, past what the parser allows
  errors = buildConfig(cl, &c);
  EXPECT_TRUE(hasError(errors, "--port", "port must be 1..65535"));
}

TEST(LoadAndValidateYamlTest, SeveralErrorsAtOnce) {
  Config c;
  auto errors = loadAndValidateYaml(R"(
listen:
  port: 70000
workers: -2
backend:
  conections: 1
shards:
  - name: a
    address: 127.0.0.1:7001
    slots: [0-8191]
  - name: a
    address: 127.0.0.1:7002
    slots: [100-200, 8192-9000]
  - name: c
    address: 127.0.0.1:7001
    slots: [9001-10000]
limits:
  max_bulk_len: abc
  max_clients: 0
log_level: chatty
)",
                                    &c);
  EXPECT_TRUE(hasError(errors, "listen.port", "port must be 1..65535, got '70000'"));
  EXPECT_TRUE(hasError(errors, "workers", "expected a non-negative integer, got '-2'"));
  EXPECT_TRUE(hasError(errors, "backend.conections", "unknown key"));
  EXPECT_TRUE(hasError(errors, "shards[1].name", "duplicate name 'a' (also shards[0])"));
  EXPECT_TRUE(hasError(errors, "shards[2].address", "duplicate address 127.0.0.1:7001"));
  EXPECT_TRUE(hasError(errors, "shards[1].slots[0]", "slots 100-200 overlap shards[0]"));
  EXPECT_TRUE(hasError(errors, "shards", "slots 10001-16383 are not assigned to any shard"));
  EXPECT_TRUE(hasError(errors, "limits.max_bulk_len", "expected a size"));
  EXPECT_TRUE(hasError(errors, "limits.max_clients", "must be greater than 0"));
  EXPECT_TRUE(hasError(errors, "log_level", "unknown level 'chatty'"));
  EXPECT_EQ(errors.size(), 10u) << dump(errors);
}

TEST(LoadAndValidateYamlTest, SlowCommands) {
  Config c;
  auto errors = loadAndValidateYaml(R"(
shards:
  - address: 127.0.0.1:7001
backend:
  slow_commands: [eval, "FUNCTION LOAD", script|kill]
  slow_timeout_ms: 30000
)",
                                    &c);
  ASSERT_TRUE(errors.empty()) << dump(errors);
  EXPECT_EQ(c.backend_slow_commands,
            (std::vector<std::string>{"eval", "FUNCTION LOAD", "script|kill"}));
  EXPECT_EQ(c.backend_slow_timeout_ms, 30000u);
  errors = loadAndValidateYaml(R"(
shards:
  - address: 127.0.0.1:7001
backend:
  slow_commands: [eval, evil]
  slow_timeout_ms: 0
)",
                               &c);
  EXPECT_TRUE(hasError(errors, "backend.slow_commands[1]", "unknown command 'evil'"));
  EXPECT_TRUE(hasError(errors, "backend.slow_timeout_ms", "must be greater than 0"));
  EXPECT_EQ(errors.size(), 2u) << dump(errors);
}

TEST(LoadAndValidateYamlTest, ValidatorDoesNotRepeatLoaderErrors) {
  Config c;
  // shards[0]'s address did not parse; the validator would also call its host missing.
  auto errors = loadAndValidateYaml(R"(
shards:
  - address: foo
  - address: 127.0.0.1:2
  - 42
listen:
  port: 0
)",
                                    &c);
  EXPECT_EQ(countPath(errors, "shards[0].address"), 1u) << dump(errors);
  EXPECT_EQ(countPath(errors, "shards[2]"), 1u) << dump(errors);
  EXPECT_EQ(countPath(errors, "listen.port"), 1u) << dump(errors);
  EXPECT_EQ(errors.size(), 3u) << dump(errors);

  // A broken slot entry makes coverage unknown: no "not assigned" on top of it.
  errors = loadAndValidateYaml(R"(
shards:
  - address: 127.0.0.1:1
    slots: [0-8191]
  - address: 127.0.0.1:2
    slots: [8192-x]
)",
                               &c);
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  EXPECT_EQ(errors[0].path, "shards[1].slots[0]");

  errors = loadAndValidateYaml("shards: 5\n", &c);
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  EXPECT_EQ(errors[0].path, "shards");
}

TEST(LoadAndValidateYamlTest, SlotRulesFromYaml) {
  Config c;
  auto errors = loadAndValidateYaml(R"(
shards:
  - address: 127.0.0.1:1
    slots: [0-8191, 16384, 300-200]
  - address: 127.0.0.1:2
)",
                                    &c);
  EXPECT_TRUE(hasError(errors, "shards[0].slots[1]", "slot 16384 is out of range 0..16383"));
  EXPECT_TRUE(hasError(errors, "shards[0].slots[2]", "reversed range 300-200"));
  EXPECT_TRUE(hasError(errors, "shards[1].slots", "every shard must"));
  EXPECT_EQ(errors.size(), 3u) << dump(errors);

  errors = loadAndValidateYaml(R"(
shards:
  - address: 127.0.0.1:1
    slots: [0-8191]
  - address: 127.0.0.1:2
    slots: [8000-8191]
)",
                               &c);
  EXPECT_TRUE(hasError(errors, "shards[1].slots[0]", "slots 8000-8191 overlap shards[0]"));
  EXPECT_TRUE(hasError(errors, "shards", "slots 8192-16383 are not assigned to any shard"));
  EXPECT_EQ(errors.size(), 2u) << dump(errors);
}

TEST(LoadAndValidateYamlTest, SyntaxErrorAlone) {
  Config c;
  auto errors = loadAndValidateYaml("listen:\n  port: [\n", &c);
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  EXPECT_EQ(errors[0].path, "yaml");
  errors = loadAndValidateYaml("[1, 2]\n", &c);
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  EXPECT_EQ(errors[0].path, "(top level)");
}

}  // namespace
}  // namespace sp::config
