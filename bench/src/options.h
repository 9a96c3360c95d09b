// Options: every shardbench flag (redis-benchmark and memtier_benchmark spellings), parsed and
// checked for conflicts and bad values before anything connects.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cpu_list.h"
#include "key_generator.h"

namespace sp::bench {

enum class WorkloadMode : uint8_t {
  kTests,     // -t: redis-benchmark tests, each in turn, -n requests each
  kRatio,     // --ratio S:G (also the default): memtier's mixed SET/GET
  kCommands,  // --command templates, or a command given after the flags (redis-benchmark)
};

struct CommandSpec {
  std::vector<std::string> argv;
  uint32_t ratio = 1;
  KeyPattern pattern = KeyPattern::kRandom;
};

struct Options {
  // Where to connect.
  std::string host = "127.0.0.1";
  uint16_t port = 6379;
  std::string password;
  std::string user;
  int dbnum = -1;  // -1: no SELECT
  uint32_t connect_timeout_ms = 5000;
  uint32_t request_timeout_ms = 10000;
  uint32_t max_reconnects = 0;  // per thread, after a server closes a connection
  // --source-address: local addresses the connections bind to in turn (numeric, the target's
  // family), so more connections than one address's ephemeral ports can reach one server port.
  std::vector<std::string> source_addresses;
  // --tls and its files: every connection runs a TLS handshake before AUTH/SELECT.
  bool tls = false;
  std::string tls_ca_cert_file;  // --cacert; "" = the system's CA store
  std::string tls_cert_file;     // --cert, client certificate (needs --key)
  std::string tls_key_file;      // --key
  std::string tls_sni;           // --sni: SNI and the name verified; "" = the host
  bool tls_verify = true;        // false with --tls-skip-verify
  std::string tls_protocols;     // --tls-protocols "TLSv1.2 TLSv1.3"; "" = OpenSSL's default
  std::string tls_ciphers;       // --tls-ciphers (TLS 1.2)
  std::string tls_ciphersuites;  // --tls-ciphersuites (TLS 1.3)

  // Load shape.
  uint32_t threads = 1;
  uint32_t clients_total = 50;       // connections over all threads
  uint64_t requests_total = 0;       // per test (phase) over all clients; 0 with --test-time
  uint64_t requests_per_client = 0;  // memtier --requests; 0: split requests_total
  double test_time_s = 0;
  double time_limit_s = 0;  // --time-limit: a request-count test also ends after this long
  uint32_t pipeline = 1;
  double rate = 0;                  // total requests/s; 0: as fast as possible
  uint64_t reconnect_interval = 0;  // reconnect every N requests per connection; 0: keep alive
  CpuList client_cpus;  // matrix and scenario --client-cpus: the client threads run only there

  // Workload.
  WorkloadMode mode = WorkloadMode::kRatio;
  std::vector<std::string> tests;
  uint32_t ratio_set = 1;
  uint32_t ratio_get = 10;
  std::vector<CommandSpec> commands;
  uint32_t data_size_min = 32;
  uint32_t data_size_max = 32;
  bool random_data = false;
  std::string key_prefix = "memtier-";
  bool has_key_range = true;  // false: redis-benchmark without -r, __rand_int__ stays literal
  KeyRange keys{0, 10000000};
  KeyPattern set_pattern = KeyPattern::kRandom;
  KeyPattern get_pattern = KeyPattern::kRandom;
  bool randomize = false;
  uint64_t seed = 0x5eedbe11c4ull;

  // --verify.
  bool verify = false;
  uint32_t verify_print = 5;
  bool verify_allow_loss = false;  // a nil for an acknowledged write is "lost", not a mismatch

  // Output.
  bool quiet = false;
  bool csv = false;
  bool progress = true;  // only ever shown when stderr is a terminal
  std::string json_out_file;
  std::string out_file;
  std::vector<double> print_percentiles;  // --print-percentiles, sorted; empty: no tables
  std::string hdr_file_prefix;            // --hdr-file-prefix: PREFIX_<ROW>.hgrm per command row
  std::string command_line;               // the flags as given, for reports

  bool help = false;
  bool version = false;

  uint32_t clientsOnThread(uint32_t thread) const {
    return clients_total / threads + (thread < clients_total % threads ? 1 : 0);
  }
};

// Parses the arguments after the program name. False with a one-line message in *error for an
// unknown flag, a bad value or conflicting flags (the caller exits with status 2).
bool parseOptions(const std::vector<std::string>& args, Options* out, std::string* error);

std::string helpText();

// Whether `flag` ("--cacert", "--tls-skip-verify", ...) is one of the TLS flags of the run
// command, so that the matrix and scenario subcommands can say they do not take it.
bool isTlsFlag(std::string_view flag);

}  // namespace sp::bench
