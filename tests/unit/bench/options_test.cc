// Flag parsing: both tools' spellings, defaults per workload mode, conflicts and bad values.
#include "options.h"

#include <gtest/gtest.h>

namespace sp::bench {
namespace {

bool parse(std::vector<std::string> args, Options* o, std::string* error) {
  return parseOptions(args, o, error);
}

Options ok(std::vector<std::string> args) {
  Options o;
  std::string error;
  EXPECT_TRUE(parse(args, &o, &error)) << error;
  return o;
}

std::string bad(std::vector<std::string> args) {
  Options o;
  std::string error;
  EXPECT_FALSE(parse(args, &o, &error)) << "accepted";
  EXPECT_FALSE(error.empty());
  return error;
}

TEST(OptionsTest, Defaults) {
  Options o = ok({});
  EXPECT_EQ(o.host, "127.0.0.1");
  EXPECT_EQ(o.port, 6379);
  EXPECT_EQ(o.threads, 1u);
  EXPECT_EQ(o.clients_total, 50u);
  EXPECT_EQ(o.requests_total, 100000u);
  EXPECT_EQ(o.pipeline, 1u);
  EXPECT_EQ(o.mode, WorkloadMode::kRatio);
  EXPECT_EQ(o.ratio_set, 1u);
  EXPECT_EQ(o.ratio_get, 10u);
  EXPECT_EQ(o.data_size_min, 32u);
  EXPECT_EQ(o.key_prefix, "memtier-");
  EXPECT_EQ(o.keys.min, 0u);
  EXPECT_EQ(o.keys.max, 10000000u);
  EXPECT_TRUE(o.has_key_range);
}

TEST(OptionsTest, RedisBenchmarkSpelling) {
  Options o = ok({"-h", "10.0.0.1", "-p", "7000",      "-a", "pw",      "-c",      "64",
                  "-n", "1000",     "-d", "256",       "-t", "get,set", "-P",      "16",
                  "-r", "10000",    "-q", "--threads", "4",  "--csv",   "--dbnum", "3"});
  EXPECT_EQ(o.host, "10.0.0.1");
  EXPECT_EQ(o.port, 7000);
  EXPECT_EQ(o.password, "pw");
  EXPECT_EQ(o.clients_total, 64u);
  EXPECT_EQ(o.requests_total, 1000u);
  EXPECT_EQ(o.data_size_min, 256u);
  EXPECT_EQ(o.data_size_max, 256u);
  EXPECT_EQ(o.mode, WorkloadMode::kTests);
  EXPECT_EQ(o.tests, (std::vector<std::string>{"get", "set"}));
  EXPECT_EQ(o.pipeline, 16u);
  EXPECT_TRUE(o.has_key_range);
  EXPECT_EQ(o.keys.min, 0u);
  EXPECT_EQ(o.keys.max, 9999u);
  EXPECT_TRUE(o.quiet);
  EXPECT_TRUE(o.csv);
  EXPECT_EQ(o.threads, 4u);
  EXPECT_EQ(o.dbnum, 3);
  EXPECT_EQ(o.clientsOnThread(0), 16u);
}

TEST(OptionsTest, RedisBenchmarkDefaultsWithTests) {
  Options o = ok({"-t", "set"});
  EXPECT_EQ(o.data_size_min, 3u);  // redis-benchmark's default value size
  EXPECT_FALSE(o.has_key_range);   // no -r: the literal key "key:__rand_int__"
}

TEST(OptionsTest, AttachedShortValuesAndEqualsSigns) {
  Options o = ok({"-c10", "-n5000", "-P4", "--pipeline=8", "--data-size=100"});
  EXPECT_EQ(o.clients_total, 10u);
  EXPECT_EQ(o.requests_total, 5000u);
  EXPECT_EQ(o.pipeline, 8u);  // the later spelling wins
  EXPECT_EQ(o.data_size_min, 100u);
}

TEST(OptionsTest, MemtierSpelling) {
  Options o = ok({"-s",
                  "db.local",
                  "--port=6380",
                  "--authenticate=secret",
                  "--threads=4",
                  "--clients=30",
                  "--requests=1000",
                  "--ratio=1:4",
                  "--key-prefix=pre:",
                  "--key-minimum=100",
                  "--key-maximum=900",
                  "--key-pattern=S:R",
                  "--data-size-range=10-20",
                  "--random-data",
                  "--randomize",
                  "--distinct-client-seed",
                  "--reconnect-interval=1",
                  "--select-db=2",
                  "--json-out-file=o.json",
                  "--out-file=o.txt",
                  "--hide-histogram"});
  EXPECT_EQ(o.host, "db.local");
  EXPECT_EQ(o.port, 6380);
  EXPECT_EQ(o.password, "secret");
  EXPECT_EQ(o.threads, 4u);
  EXPECT_EQ(o.clients_total, 120u);  // --clients is per thread
  EXPECT_EQ(o.requests_per_client, 1000u);
  EXPECT_EQ(o.requests_total, 120000u);
  EXPECT_EQ(o.ratio_set, 1u);
  EXPECT_EQ(o.ratio_get, 4u);
  EXPECT_EQ(o.key_prefix, "pre:");
  EXPECT_EQ(o.keys.min, 100u);
  EXPECT_EQ(o.keys.max, 900u);
  EXPECT_EQ(o.set_pattern, KeyPattern::kSequential);
  EXPECT_EQ(o.get_pattern, KeyPattern::kRandom);
  EXPECT_EQ(o.data_size_min, 10u);
  EXPECT_EQ(o.data_size_max, 20u);
  EXPECT_TRUE(o.random_data);
  EXPECT_TRUE(o.randomize);
  EXPECT_EQ(o.reconnect_interval, 1u);
  EXPECT_EQ(o.dbnum, 2);
  EXPECT_EQ(o.json_out_file, "o.json");
  EXPECT_EQ(o.out_file, "o.txt");
  EXPECT_FALSE(o.progress);
}

TEST(OptionsTest, CommandTemplatesWithRatiosAndPatterns) {
  Options o =
      ok({"--command=hset __key__ f1 __data__", "--command-ratio=2", "--command-key-pattern=Z",
          "--command", "hgetall __key__", "--zipf-theta", "1.1"});
  EXPECT_EQ(o.mode, WorkloadMode::kCommands);
  ASSERT_EQ(o.commands.size(), 2u);
  EXPECT_EQ(o.commands[0].argv, (std::vector<std::string>{"hset", "__key__", "f1", "__data__"}));
  EXPECT_EQ(o.commands[0].ratio, 2u);
  EXPECT_EQ(o.commands[0].pattern, KeyPattern::kZipf);
  EXPECT_EQ(o.commands[1].ratio, 1u);
  EXPECT_EQ(o.commands[1].pattern, KeyPattern::kRandom);
  EXPECT_DOUBLE_EQ(o.keys.zipf_theta, 1.1);
}

TEST(OptionsTest, CommandAfterTheFlagsLikeRedisBenchmark) {
  Options o = ok({"-r", "100", "-n", "10", "LPUSH", "mylist", "__rand_int__"});
  EXPECT_EQ(o.mode, WorkloadMode::kCommands);
  ASSERT_EQ(o.commands.size(), 1u);
  EXPECT_EQ(o.commands[0].argv, (std::vector<std::string>{"LPUSH", "mylist", "__rand_int__"}));
  EXPECT_EQ(o.data_size_min, 3u);
}

TEST(OptionsTest, KeepaliveZeroMeansReconnectEveryRequest) {
  EXPECT_EQ(ok({"-k", "0"}).reconnect_interval, 1u);
  EXPECT_EQ(ok({"-k", "1"}).reconnect_interval, 0u);
}

TEST(OptionsTest, TestTimeAndRate) {
  Options o = ok({"--test-time=2.5", "--rate=1000"});
  EXPECT_DOUBLE_EQ(o.test_time_s, 2.5);
  EXPECT_EQ(o.requests_total, 0u);
  EXPECT_DOUBLE_EQ(o.rate, 1000);
}

TEST(OptionsTest, TestSelectionNamesAreChecked) {
  EXPECT_TRUE(ok({"-t", "ping,lrange,mset"}).mode == WorkloadMode::kTests);
  const std::string e = bad({"-t", "set,bogus"});
  EXPECT_NE(e.find("unknown test 'bogus'"), std::string::npos) << e;
  EXPECT_NE(e.find("known:"), std::string::npos) << e;
}

TEST(OptionsTest, Conflicts) {
  EXPECT_NE(bad({"-c", "10", "--clients", "5"}).find("cannot be used together"), std::string::npos);
  bad({"-n", "10", "--requests", "5"});
  bad({"-n", "10", "--test-time", "5"});
  bad({"--requests", "10", "--test-time", "5"});
  bad({"-t", "set", "--ratio", "1:1"});
  bad({"-t", "set", "--command", "get x"});
  bad({"--ratio", "1:1", "--command", "get x"});
  bad({"-r", "10", "--key-maximum", "5"});
  bad({"-r", "10", "--key-minimum", "5"});
  bad({"-d", "10", "--data-size-range", "1-5"});
  bad({"-k", "0", "--reconnect-interval", "5"});
  bad({"-t", "set", "--key-prefix", "x"});
  bad({"-t", "set", "GET", "foo"});
  EXPECT_NE(bad({"--threads", "8", "-c", "4"}).find("at least as many clients"), std::string::npos);
}

TEST(OptionsTest, BadValues) {
  EXPECT_NE(bad({"-c", "abc"}).find("invalid value 'abc' for -c"), std::string::npos);
  bad({"-c", "0"});
  bad({"-c", "-5"});
  bad({"-p", "70000"});
  bad({"-P", "0"});
  bad({"-n", "0"});
  bad({"--threads", "0"});
  bad({"-d", "0"});
  bad({"--rate", "0"});
  bad({"--rate", "-1"});
  bad({"--rate", "fast"});
  bad({"--test-time", "0"});
  bad({"--ratio", "1"});
  bad({"--ratio", "0:0"});
  bad({"--ratio", "a:b"});
  bad({"--key-pattern", "Q:R"});
  bad({"--key-pattern", "SS"});
  bad({"--data-size-range", "20-10"});
  bad({"--data-size-range", "10"});
  bad({"--data-size-range", "0-10"});
  bad({"--key-minimum", "10", "--key-maximum", "5"});
  bad({"--zipf-theta", "0"});
  bad({"-k", "maybe"});
  bad({"--command", "set 'unbalanced"});
  bad({"--command", ""});
  bad({"--key-median", "20000000"});  // outside the default 0..10000000
}

TEST(OptionsTest, OrderingAndShapeErrors) {
  EXPECT_NE(bad({"--command-ratio", "2"}).find("must follow the --command"), std::string::npos);
  bad({"--command-key-pattern", "R"});
  EXPECT_NE(bad({"--bogus"}).find("unknown flag '--bogus'"), std::string::npos);
  EXPECT_NE(bad({"-x"}).find("unknown flag '-x'"), std::string::npos);
  EXPECT_NE(bad({"-c"}).find("missing value for -c"), std::string::npos);
  EXPECT_NE(bad({"--verify=1"}).find("takes no value"), std::string::npos);
}

TEST(OptionsTest, VerifyNeedsOwnedKeys) {
  EXPECT_NE(bad({"-t", "set,get", "--verify"}).find("needs a key range"), std::string::npos);
  EXPECT_NE(bad({"-t", "set,get", "-r", "10", "--verify"}).find("one key per client"),
            std::string::npos);
  Options o = ok({"-t", "set,get", "-r", "1000", "--verify"});
  EXPECT_TRUE(o.verify);
  EXPECT_TRUE(ok({"--verify", "--ratio=1:1"}).verify);  // memtier mode has a default range
  EXPECT_FALSE(o.verify_allow_loss);
  EXPECT_TRUE(ok({"--verify", "--verify-allow-loss", "--ratio=1:1"}).verify_allow_loss);
  EXPECT_NE(bad({"--verify-allow-loss", "--ratio=1:1"}).find("--verify-allow-loss needs --verify"),
            std::string::npos);
}

TEST(OptionsTest, TlsIsOffByDefault) {
  Options o = ok({});
  EXPECT_FALSE(o.tls);
  EXPECT_TRUE(o.tls_verify);
  EXPECT_TRUE(o.tls_ca_cert_file.empty());
  EXPECT_TRUE(o.tls_cert_file.empty());
  EXPECT_TRUE(o.tls_sni.empty());
}

TEST(OptionsTest, MemtierTlsFlags) {
  Options o = ok({"--tls", "--cacert", "ca.crt", "--cert=client.crt", "--key", "client.key",
                  "--sni", "redis.example", "--tls-protocols", "TLSv1.2 TLSv1.3"});
  EXPECT_TRUE(o.tls);
  EXPECT_EQ(o.tls_ca_cert_file, "ca.crt");
  EXPECT_EQ(o.tls_cert_file, "client.crt");
  EXPECT_EQ(o.tls_key_file, "client.key");
  EXPECT_EQ(o.tls_sni, "redis.example");
  EXPECT_EQ(o.tls_protocols, "TLSv1.2 TLSv1.3");
  EXPECT_TRUE(o.tls_verify);
  EXPECT_FALSE(ok({"--tls", "--tls-skip-verify"}).tls_verify);
}

TEST(OptionsTest, RedisBenchmarkTlsSpellings) {
  Options o = ok({"--tls", "--insecure", "--tls-ciphers", "ECDHE-RSA-AES128-GCM-SHA256",
                  "--tls-ciphersuites", "TLS_AES_128_GCM_SHA256", "-t", "set"});
  EXPECT_FALSE(o.tls_verify);
  EXPECT_EQ(o.tls_ciphers, "ECDHE-RSA-AES128-GCM-SHA256");
  EXPECT_EQ(o.tls_ciphersuites, "TLS_AES_128_GCM_SHA256");
}

TEST(OptionsTest, TlsFlagsNeedTls) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"--cacert", "ca.crt"},
                                             {"--cert", "c.crt", "--key", "c.key"},
                                             {"--sni", "x"},
                                             {"--tls-skip-verify"},
                                             {"--tls-protocols", "TLSv1.3"},
                                             {"--tls-ciphers", "HIGH"},
                                             {"--tls-ciphersuites", "TLS_AES_128_GCM_SHA256"}}) {
    EXPECT_NE(bad(args).find("needs --tls"), std::string::npos) << args[0];
  }
}

TEST(OptionsTest, TlsBadValues) {
  EXPECT_NE(bad({"--tls", "--cert", "c.crt"}).find("--cert and --key go together"),
            std::string::npos);
  EXPECT_NE(bad({"--tls", "--key", "c.key"}).find("--cert and --key go together"),
            std::string::npos);
  EXPECT_NE(bad({"--tls", "--tls-protocols", "SSLv3"}).find("--tls-protocols"), std::string::npos);
  EXPECT_NE(bad({"--tls", "--cacert="}).find("empty value for --cacert"), std::string::npos);
  EXPECT_NE(bad({"--tls", "--cacert"}).find("missing value for --cacert"), std::string::npos);
  EXPECT_NE(bad({"--tls=1"}).find("takes no value"), std::string::npos);
}

TEST(OptionsTest, TlsFlagsAreKnownToTheSubcommands) {
  for (const char* flag :
       {"--tls", "--cacert", "--cert", "--key", "--sni", "--tls-skip-verify", "--insecure",
        "--tls-protocols", "--tls-ciphers", "--tls-ciphersuites"}) {
    EXPECT_TRUE(isTlsFlag(flag)) << flag;
  }
  EXPECT_FALSE(isTlsFlag("--threads"));
  EXPECT_FALSE(isTlsFlag("-k"));
}

TEST(OptionsTest, HelpListsEveryFlag) {
  const std::string help = helpText();
  for (const char* flag : {"-h,",
                           "-s,",
                           "-p,",
                           "-a,",
                           "--user",
                           "--dbnum",
                           "--connect-timeout",
                           "--request-timeout",
                           "--max-reconnects",
                           "--threads",
                           "-c N",
                           "--clients",
                           "-n N",
                           "--requests",
                           "--test-time",
                           "-P,",
                           "--rate",
                           "-k 1|0",
                           "--reconnect-interval",
                           "-t,",
                           "--ratio",
                           "--command ",
                           "--command-ratio",
                           "--command-key-pattern",
                           "-d,",
                           "--data-size-range",
                           "--random-data",
                           "-r N",
                           "--key-prefix",
                           "--key-minimum",
                           "--key-maximum",
                           "--key-pattern",
                           "--key-median",
                           "--key-stddev",
                           "--zipf-theta",
                           "--randomize",
                           "--distinct-client-seed",
                           "--seed",
                           "--verify",
                           "--verify-print",
                           "--verify-allow-loss",
                           "-q,",
                           "--csv",
                           "--json-out-file",
                           "--out-file",
                           "--no-progress",
                           "--print-percentiles",
                           "--hdr-file-prefix",
                           "--tls ",
                           "--cacert",
                           "--cert",
                           "--key",
                           "--sni",
                           "--tls-skip-verify",
                           "--insecure",
                           "--tls-protocols",
                           "--tls-ciphers",
                           "--tls-ciphersuites",
                           "--help",
                           "--version",
                           "merge"}) {
    EXPECT_NE(help.find(flag), std::string::npos) << flag;
  }
}

TEST(OptionsTest, HelpAndVersionNeedNothingElse) {
  EXPECT_TRUE(ok({"--help"}).help);
  EXPECT_TRUE(ok({"--version"}).version);
}

}  // namespace
}  // namespace sp::bench
