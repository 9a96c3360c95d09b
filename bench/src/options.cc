// Flag parsing: a table of flags with their spellings, then conflict and range checks.
#include "options.h"

#include <arpa/inet.h>

#include <charconv>
#include <cmath>
#include <functional>
#include <set>

#include "command_template.h"
#include "percentile_table.h"
#include "redis_tests.h"
#include "tls/tls_context.h"

namespace sp::bench {
namespace {

using Handler = std::function<bool(Options&, const std::string&, std::string*)>;

struct Flag {
  std::vector<std::string_view> names;  // "-c", "--clients", ...
  std::string_view id;                  // canonical id for conflict checks
  bool takes_value;
  Handler handle;
};

std::string quoteFlag(std::string_view flag) { return std::string(flag); }

bool parseU64(const std::string& value, std::string_view flag, uint64_t min, uint64_t max,
              uint64_t* out, std::string* error) {
  uint64_t v = 0;
  const char* end = value.data() + value.size();
  auto res = std::from_chars(value.data(), end, v);
  if (value.empty() || res.ec != std::errc() || res.ptr != end || v < min || v > max) {
    *error = "invalid value '" + value + "' for " + quoteFlag(flag) +
             ": expected an integer from " + std::to_string(min) + " to " + std::to_string(max);
    return false;
  }
  *out = v;
  return true;
}

template <typename T>
bool parseInt(const std::string& value, std::string_view flag, uint64_t min, uint64_t max, T* out,
              std::string* error) {
  uint64_t v = 0;
  if (!parseU64(value, flag, min, max, &v, error)) {
    return false;
  }
  *out = static_cast<T>(v);
  return true;
}

bool parseDouble(const std::string& value, std::string_view flag, double min, double max,
                 bool min_exclusive, double* out, std::string* error) {
  double v = 0;
  const char* end = value.data() + value.size();
  auto res = std::from_chars(value.data(), end, v);
  const bool low = min_exclusive ? v <= min : v < min;
  if (value.empty() || res.ec != std::errc() || res.ptr != end || !std::isfinite(v) || low ||
      v > max) {
    char range[96];
    std::snprintf(range, sizeof(range), "a number %s %g and at most %g",
                  min_exclusive ? "above" : "of at least", min, max);
    *error = "invalid value '" + value + "' for " + quoteFlag(flag) + ": expected " + range;
    return false;
  }
  *out = v;
  return true;
}

// "S", "R:R", "S:G" -> set and get patterns.
bool parseKeyPatternPair(const std::string& value, Options& o, std::string* error) {
  const size_t colon = value.find(':');
  const std::string a = value.substr(0, colon);
  const std::string b = colon == std::string::npos ? a : value.substr(colon + 1);
  auto pa = parseKeyPattern(a);
  auto pb = parseKeyPattern(b);
  if (!pa || !pb) {
    *error = "invalid value '" + value +
             "' for --key-pattern: expected SET:GET patterns like R:R or S:R, each one of S "
             "(sequential), P (parallel), R (random), G (gaussian), Z (zipfian)";
    return false;
  }
  o.set_pattern = *pa;
  o.get_pattern = *pb;
  return true;
}

bool parseRatio(const std::string& value, Options& o, std::string* error) {
  const size_t colon = value.find(':');
  std::string bad = "invalid value '" + value +
                    "' for --ratio: expected SET:GET counts such as 1:10 (not both zero)";
  if (colon == std::string::npos) {
    *error = bad;
    return false;
  }
  uint64_t s = 0;
  uint64_t g = 0;
  std::string ignored;
  if (!parseU64(value.substr(0, colon), "--ratio", 0, 1000000, &s, &ignored) ||
      !parseU64(value.substr(colon + 1), "--ratio", 0, 1000000, &g, &ignored) || s + g == 0) {
    *error = bad;
    return false;
  }
  o.ratio_set = static_cast<uint32_t>(s);
  o.ratio_get = static_cast<uint32_t>(g);
  return true;
}

bool parseSizeRange(const std::string& value, Options& o, std::string* error) {
  const size_t dash = value.find('-');
  std::string bad = "invalid value '" + value +
                    "' for --data-size-range: expected MIN-MAX bytes with 1 <= MIN <= MAX";
  uint64_t lo = 0;
  uint64_t hi = 0;
  std::string ignored;
  if (dash == std::string::npos ||
      !parseU64(value.substr(0, dash), "--data-size-range", 1, 512u << 20, &lo, &ignored) ||
      !parseU64(value.substr(dash + 1), "--data-size-range", 1, 512u << 20, &hi, &ignored) ||
      lo > hi) {
    *error = bad;
    return false;
  }
  o.data_size_min = static_cast<uint32_t>(lo);
  o.data_size_max = static_cast<uint32_t>(hi);
  return true;
}

bool parseBool01(const std::string& value, std::string_view flag, bool* out, std::string* error) {
  if (value == "1" || value == "yes" || value == "true") {
    *out = true;
    return true;
  }
  if (value == "0" || value == "no" || value == "false") {
    *out = false;
    return true;
  }
  *error = "invalid value '" + value + "' for " + std::string(flag) + ": expected 1 or 0";
  return false;
}

std::vector<std::string> splitList(const std::string& value) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= value.size()) {
    size_t comma = value.find(',', start);
    if (comma == std::string::npos) {
      comma = value.size();
    }
    if (comma > start) {
      out.push_back(value.substr(start, comma - start));
    }
    start = comma + 1;
  }
  return out;
}

bool isNumericAddress(const std::string& text) {
  in6_addr buf{};
  return inet_pton(AF_INET, text.c_str(), &buf) == 1 ||
         inet_pton(AF_INET6, text.c_str(), &buf) == 1;
}

// Every TLS flag of the run command; all but --tls itself need --tls.
constexpr std::string_view kTlsFlags[] = {
    "--tls",         "--cacert",          "--cert",     "--key",
    "--sni",         "--tls-skip-verify", "--insecure", "--tls-protocols",
    "--tls-ciphers", "--tls-ciphersuites"};

// A file or name flag that must not be empty.
Handler nonEmpty(std::string_view flag, std::string Options::*field) {
  return [flag, field](Options& o, const std::string& v, std::string* e) {
    if (v.empty()) {
      *e = "empty value for " + std::string(flag);
      return false;
    }
    o.*field = v;
    return true;
  };
}

struct ParseState {
  bool keepalive = true;
  uint64_t r = 0;
  uint64_t data_size = 0;
  uint64_t key_min = 0;
  uint64_t key_max = 0;
  uint32_t clients_per_thread = 0;
  uint64_t requests = 0;
};

std::vector<Flag> flagTable(ParseState& st) {
  std::vector<Flag> f;
  auto add = [&](std::vector<std::string_view> names, std::string_view id, bool takes_value,
                 Handler h) {
    f.push_back({std::move(names), id, takes_value, std::move(h)});
  };

  add({"-h", "--host", "-s", "--server"}, "host", true,
      [](Options& o, const std::string& v, std::string* e) {
        if (v.empty()) {
          *e = "empty host for -h/-s";
          return false;
        }
        o.host = v;
        return true;
      });
  add({"-p", "--port"}, "port", true, [](Options& o, const std::string& v, std::string* e) {
    return parseInt(v, "-p", 1, 65535, &o.port, e);
  });
  add({"-a", "--authenticate", "--auth"}, "auth", true,
      [](Options& o, const std::string& v, std::string*) {
        o.password = v;
        return true;
      });
  add({"--user"}, "user", true, [](Options& o, const std::string& v, std::string*) {
    o.user = v;
    return true;
  });
  add({"--dbnum", "--select-db"}, "dbnum", true,
      [](Options& o, const std::string& v, std::string* e) {
        return parseInt(v, "--dbnum", 0, 1000000, &o.dbnum, e);
      });
  add({"--connect-timeout"}, "connect-timeout", true,
      [](Options& o, const std::string& v, std::string* e) {
        return parseInt(v, "--connect-timeout", 1, 3600000, &o.connect_timeout_ms, e);
      });
  add({"--request-timeout"}, "request-timeout", true,
      [](Options& o, const std::string& v, std::string* e) {
        return parseInt(v, "--request-timeout", 1, 3600000, &o.request_timeout_ms, e);
      });
  add({"--max-reconnects"}, "max-reconnects", true,
      [](Options& o, const std::string& v, std::string* e) {
        return parseInt(v, "--max-reconnects", 0, 1000000000, &o.max_reconnects, e);
      });
  add({"--source-address"}, "source-address", true,
      [](Options& o, const std::string& v, std::string* e) {
        for (const std::string& a : splitList(v)) {
          if (!isNumericAddress(a)) {
            *e = "--source-address '" + a + "' is not a numeric IPv4 or IPv6 address";
            return false;
          }
          o.source_addresses.push_back(a);
        }
        if (o.source_addresses.empty()) {
          *e = "empty --source-address";
          return false;
        }
        return true;
      });
  add({"--tls"}, "--tls", false, [](Options& o, const std::string&, std::string*) {
    o.tls = true;
    return true;
  });
  add({"--cacert"}, "--cacert", true, nonEmpty("--cacert", &Options::tls_ca_cert_file));
  add({"--cert"}, "--cert", true, nonEmpty("--cert", &Options::tls_cert_file));
  add({"--key"}, "--key", true, nonEmpty("--key", &Options::tls_key_file));
  add({"--sni"}, "--sni", true, nonEmpty("--sni", &Options::tls_sni));
  add({"--tls-skip-verify", "--insecure"}, "--tls-skip-verify", false,
      [](Options& o, const std::string&, std::string*) {
        o.tls_verify = false;
        return true;
      });
  add({"--tls-protocols"}, "--tls-protocols", true,
      [](Options& o, const std::string& v, std::string* e) {
        int min_version = 0;
        int max_version = 0;
        if (!tls::parseProtocols(v, &min_version, &max_version)) {
          *e = "invalid value '" + v +
               "' for --tls-protocols: expected TLSv1.2, TLSv1.3 or both, separated by spaces";
          return false;
        }
        o.tls_protocols = v;
        return true;
      });
  add({"--tls-ciphers"}, "--tls-ciphers", true, nonEmpty("--tls-ciphers", &Options::tls_ciphers));
  add({"--tls-ciphersuites"}, "--tls-ciphersuites", true,
      nonEmpty("--tls-ciphersuites", &Options::tls_ciphersuites));
  add({"--threads"}, "threads", true, [](Options& o, const std::string& v, std::string* e) {
    return parseInt(v, "--threads", 1, 1024, &o.threads, e);
  });
  add({"-c"}, "-c", true, [](Options& o, const std::string& v, std::string* e) {
    return parseInt(v, "-c", 1, 1000000, &o.clients_total, e);
  });
  add({"--clients"}, "--clients", true, [&st](Options&, const std::string& v, std::string* e) {
    return parseInt(v, "--clients", 1, 1000000, &st.clients_per_thread, e);
  });
  add({"-n"}, "-n", true, [](Options& o, const std::string& v, std::string* e) {
    return parseU64(v, "-n", 1, UINT64_MAX / 2, &o.requests_total, e);
  });
  add({"--requests"}, "--requests", true, [&st](Options&, const std::string& v, std::string* e) {
    if (v == "allkeys") {
      *e = "--requests=allkeys is not supported; use --key-pattern=P with -n";
      return false;
    }
    return parseU64(v, "--requests", 1, UINT64_MAX / 2, &st.requests, e);
  });
  add({"--test-time"}, "--test-time", true, [](Options& o, const std::string& v, std::string* e) {
    return parseDouble(v, "--test-time", 0, 31536000, true, &o.test_time_s, e);
  });
  add({"--time-limit"}, "--time-limit", true, [](Options& o, const std::string& v, std::string* e) {
    return parseDouble(v, "--time-limit", 0, 31536000, true, &o.time_limit_s, e);
  });
  add({"-P", "--pipeline"}, "pipeline", true, [](Options& o, const std::string& v, std::string* e) {
    return parseInt(v, "-P", 1, 100000, &o.pipeline, e);
  });
  add({"--rate"}, "rate", true, [](Options& o, const std::string& v, std::string* e) {
    return parseDouble(v, "--rate", 0, 1e9, true, &o.rate, e);
  });
  add({"-k"}, "-k", true, [&st](Options&, const std::string& v, std::string* e) {
    return parseBool01(v, "-k", &st.keepalive, e);
  });
  add({"--reconnect-interval"}, "--reconnect-interval", true,
      [](Options& o, const std::string& v, std::string* e) {
        return parseU64(v, "--reconnect-interval", 1, UINT64_MAX / 2, &o.reconnect_interval, e);
      });
  add({"-t", "--tests"}, "-t", true, [](Options& o, const std::string& v, std::string* e) {
    o.tests = splitList(v);
    std::vector<size_t> ignored;
    if (o.tests.empty()) {
      *e = "empty test list for -t";
      return false;
    }
    return selectRedisTests(o.tests, &ignored, e);
  });
  add({"--ratio"}, "--ratio", true,
      [](Options& o, const std::string& v, std::string* e) { return parseRatio(v, o, e); });
  add({"--command"}, "--command", true, [](Options& o, const std::string& v, std::string* e) {
    CommandSpec spec;
    if (!CommandTemplate::split(v, &spec.argv, e)) {
      *e = "invalid --command: " + *e;
      return false;
    }
    o.commands.push_back(std::move(spec));
    return true;
  });
  add({"--command-ratio"}, "--command-ratio", true,
      [](Options& o, const std::string& v, std::string* e) {
        if (o.commands.empty()) {
          *e = "--command-ratio must follow the --command it applies to";
          return false;
        }
        return parseInt(v, "--command-ratio", 1, 1000000, &o.commands.back().ratio, e);
      });
  add({"--command-key-pattern"}, "--command-key-pattern", true,
      [](Options& o, const std::string& v, std::string* e) {
        if (o.commands.empty()) {
          *e = "--command-key-pattern must follow the --command it applies to";
          return false;
        }
        auto p = parseKeyPattern(v);
        if (!p) {
          *e = "invalid value '" + v + "' for --command-key-pattern: expected one of S, P, R, G, Z";
          return false;
        }
        o.commands.back().pattern = *p;
        return true;
      });
  add({"-d", "--data-size"}, "-d", true, [&st](Options&, const std::string& v, std::string* e) {
    return parseU64(v, "-d", 1, 512u << 20, &st.data_size, e);
  });
  add({"--data-size-range"}, "--data-size-range", true,
      [](Options& o, const std::string& v, std::string* e) { return parseSizeRange(v, o, e); });
  add({"--random-data"}, "random-data", false, [](Options& o, const std::string&, std::string*) {
    o.random_data = true;
    return true;
  });
  add({"-r"}, "-r", true, [&st](Options&, const std::string& v, std::string* e) {
    return parseU64(v, "-r", 1, UINT64_MAX / 2, &st.r, e);
  });
  add({"--key-prefix"}, "--key-prefix", true, [](Options& o, const std::string& v, std::string*) {
    o.key_prefix = v;
    return true;
  });
  add({"--key-minimum"}, "--key-minimum", true,
      [&st](Options&, const std::string& v, std::string* e) {
        return parseU64(v, "--key-minimum", 0, UINT64_MAX / 2, &st.key_min, e);
      });
  add({"--key-maximum"}, "--key-maximum", true,
      [&st](Options&, const std::string& v, std::string* e) {
        return parseU64(v, "--key-maximum", 0, UINT64_MAX / 2, &st.key_max, e);
      });
  add({"--key-pattern"}, "--key-pattern", true,
      [](Options& o, const std::string& v, std::string* e) {
        return parseKeyPatternPair(v, o, e);
      });
  add({"--key-median"}, "--key-median", true, [](Options& o, const std::string& v, std::string* e) {
    return parseDouble(v, "--key-median", 0, 9.2e18, false, &o.keys.median, e);
  });
  add({"--key-stddev"}, "--key-stddev", true, [](Options& o, const std::string& v, std::string* e) {
    return parseDouble(v, "--key-stddev", 0, 9.2e18, true, &o.keys.stddev, e);
  });
  add({"--zipf-theta", "--key-zipf-exp"}, "--zipf-theta", true,
      [](Options& o, const std::string& v, std::string* e) {
        return parseDouble(v, "--zipf-theta", 0, 10, true, &o.keys.zipf_theta, e);
      });
  add({"--randomize"}, "randomize", false, [](Options& o, const std::string&, std::string*) {
    o.randomize = true;
    return true;
  });
  add({"--distinct-client-seed"}, "distinct-client-seed", false,
      [](Options&, const std::string&, std::string*) { return true; });
  add({"--seed"}, "--seed", true, [](Options& o, const std::string& v, std::string* e) {
    return parseU64(v, "--seed", 0, UINT64_MAX, &o.seed, e);
  });
  add({"--verify"}, "--verify", false, [](Options& o, const std::string&, std::string*) {
    o.verify = true;
    return true;
  });
  add({"--verify-allow-loss"}, "--verify-allow-loss", false,
      [](Options& o, const std::string&, std::string*) {
        o.verify_allow_loss = true;
        return true;
      });
  add({"--verify-print"}, "--verify-print", true,
      [](Options& o, const std::string& v, std::string* e) {
        return parseInt(v, "--verify-print", 0, 1000000, &o.verify_print, e);
      });
  add({"-q", "--quiet"}, "quiet", false, [](Options& o, const std::string&, std::string*) {
    o.quiet = true;
    return true;
  });
  add({"--csv"}, "csv", false, [](Options& o, const std::string&, std::string*) {
    o.csv = true;
    return true;
  });
  add({"--no-progress", "--hide-histogram"}, "no-progress", false,
      [](Options& o, const std::string&, std::string*) {
        o.progress = false;
        return true;
      });
  add({"--json-out-file"}, "json-out-file", true,
      [](Options& o, const std::string& v, std::string* e) {
        if (v.empty()) {
          *e = "empty file name for --json-out-file";
          return false;
        }
        o.json_out_file = v;
        return true;
      });
  add({"--out-file", "-o"}, "out-file", true, [](Options& o, const std::string& v, std::string* e) {
    if (v.empty()) {
      *e = "empty file name for --out-file";
      return false;
    }
    o.out_file = v;
    return true;
  });
  add({"--print-percentiles"}, "print-percentiles", true,
      [](Options& o, const std::string& v, std::string* e) {
        return parsePercentileList(v, &o.print_percentiles, e);
      });
  add({"--hdr-file-prefix"}, "hdr-file-prefix", true,
      [](Options& o, const std::string& v, std::string* e) {
        if (v.empty()) {
          *e = "empty prefix for --hdr-file-prefix";
          return false;
        }
        o.hdr_file_prefix = v;
        return true;
      });
  add({"--help"}, "help", false, [](Options& o, const std::string&, std::string*) {
    o.help = true;
    return true;
  });
  add({"--version", "-v"}, "version", false, [](Options& o, const std::string&, std::string*) {
    o.version = true;
    return true;
  });
  return f;
}

const Flag* findFlag(const std::vector<Flag>& flags, std::string_view name) {
  for (const Flag& flag : flags) {
    for (std::string_view n : flag.names) {
      if (n == name) {
        return &flag;
      }
    }
  }
  return nullptr;
}

}  // namespace

bool parseOptions(const std::vector<std::string>& args, Options* out, std::string* error) {
  Options o;
  ParseState st;
  std::vector<Flag> flags = flagTable(st);
  std::set<std::string_view> given;
  std::vector<std::string> positional;
  bool only_positional = false;

  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (!o.command_line.empty()) {
      o.command_line += ' ';
    }
    o.command_line += arg;
    if (only_positional || arg.size() < 2 || arg[0] != '-') {
      positional.push_back(arg);
      continue;
    }
    if (arg == "--") {
      only_positional = true;
      continue;
    }
    std::string name;
    std::string value;
    bool has_value = false;
    if (arg.starts_with("--")) {
      const size_t eq = arg.find('=');
      name = arg.substr(0, eq);
      if (eq != std::string::npos) {
        value = arg.substr(eq + 1);
        has_value = true;
      }
    } else {
      name = arg.substr(0, 2);
      if (arg.size() > 2) {
        value = arg.substr(2);
        has_value = true;
      }
    }
    const Flag* flag = findFlag(flags, name);
    if (flag == nullptr) {
      *error = "unknown flag '" + name + "' (see --help)";
      return false;
    }
    if (flag->takes_value && !has_value) {
      if (i + 1 >= args.size()) {
        *error = "missing value for " + name;
        return false;
      }
      value = args[++i];
      o.command_line += ' ';
      o.command_line += value;
    } else if (!flag->takes_value && has_value) {
      *error = name + " takes no value";
      return false;
    }
    if (!flag->handle(o, value, error)) {
      return false;
    }
    given.insert(flag->id);
  }

  if (o.help || o.version) {
    *out = std::move(o);
    return true;
  }
  auto has = [&](std::string_view id) { return given.count(id) > 0; };
  auto conflict = [&](std::string_view a, std::string_view b, std::string_view why) {
    if (has(a) && has(b)) {
      *error = std::string(a) + " and " + std::string(b) +
               " cannot be used together: " + std::string(why);
      return true;
    }
    return false;
  };
  if (conflict("-c", "--clients", "-c is the total over all threads, --clients is per thread") ||
      conflict("-n", "--requests", "-n is the total per test, --requests is per client") ||
      conflict("-n", "--test-time", "give a request count or a duration") ||
      conflict("--requests", "--test-time", "give a request count or a duration") ||
      conflict("--test-time", "--time-limit", "--test-time already ends each test by time") ||
      conflict("-t", "--ratio", "-t runs redis-benchmark tests, --ratio a SET/GET mix") ||
      conflict("-t", "--command", "-t runs redis-benchmark tests, --command your own") ||
      conflict("--ratio", "--command", "--ratio mixes SET/GET, --command runs templates") ||
      conflict("-r", "--key-minimum", "-r n means keys 0..n-1") ||
      conflict("-r", "--key-maximum", "-r n means keys 0..n-1") ||
      conflict("-d", "--data-size-range", "give one size or a range") ||
      conflict("-k", "--reconnect-interval", "-k 0 means --reconnect-interval=1") ||
      conflict("-t", "--key-prefix",
               "-t tests use redis-benchmark's key:__rand_int__ keys; use --command")) {
    return false;
  }
  if (!positional.empty()) {
    if (has("-t") || has("--ratio") || has("--command")) {
      *error = "a command after the flags ('" + positional[0] +
               " ...') cannot be combined with -t, --ratio or --command";
      return false;
    }
  }

  // Workload mode and the defaults that depend on it.
  if (has("-t")) {
    o.mode = WorkloadMode::kTests;
  } else if (!positional.empty()) {
    o.mode = WorkloadMode::kCommands;
    o.commands.push_back({positional, 1, KeyPattern::kRandom});
  } else if (has("--command")) {
    o.mode = WorkloadMode::kCommands;
  } else {
    o.mode = WorkloadMode::kRatio;
  }
  const bool redis_benchmark_style = has("-t") || !positional.empty();
  if (redis_benchmark_style) {
    // redis-benchmark: 3-byte values; without -r every request uses the literal key
    // "key:__rand_int__".
    o.data_size_min = o.data_size_max = 3;
    o.has_key_range = has("-r") || has("--key-minimum") || has("--key-maximum");
    o.keys.min = 0;
    o.keys.max = has("--key-maximum") ? st.key_max : (has("-r") ? st.r - 1 : 999999999999ull);
  } else {
    o.keys.max = has("--key-maximum") ? st.key_max : (has("-r") ? st.r - 1 : o.keys.max);
  }
  if (has("--key-minimum")) {
    o.keys.min = st.key_min;
  }
  if (o.keys.min > o.keys.max) {
    *error = "--key-minimum (" + std::to_string(o.keys.min) + ") is above --key-maximum (" +
             std::to_string(o.keys.max) + ")";
    return false;
  }
  if (o.keys.median >= 0 && (o.keys.median < static_cast<double>(o.keys.min) ||
                             o.keys.median > static_cast<double>(o.keys.max))) {
    *error = "--key-median is outside --key-minimum..--key-maximum";
    return false;
  }
  if (has("-d")) {
    o.data_size_min = o.data_size_max = static_cast<uint32_t>(st.data_size);
  }
  if (has("--clients")) {
    o.clients_total = st.clients_per_thread * o.threads;
  }
  if (o.clients_total < o.threads) {
    *error = "--threads " + std::to_string(o.threads) + " needs at least as many clients (-c " +
             std::to_string(o.clients_total) + ")";
    return false;
  }
  if (has("--requests")) {
    o.requests_per_client = st.requests;
    o.requests_total = st.requests * o.clients_total;
  } else if (!has("-n") && !has("--test-time")) {
    o.requests_total = 100000;
  }
  if (!st.keepalive) {
    o.reconnect_interval = 1;
  }
  if (o.verify_allow_loss && !o.verify) {
    *error = "--verify-allow-loss needs --verify";
    return false;
  }
  if (o.verify) {
    if (!o.has_key_range) {
      *error =
          "--verify needs a key range (-r or --key-minimum/--key-maximum) so that every "
          "client owns its own keys";
      return false;
    }
    if (o.keys.size() < o.clients_total) {
      *error = "--verify needs at least one key per client: the key range has " +
               std::to_string(o.keys.size()) + " keys for " + std::to_string(o.clients_total) +
               " clients";
      return false;
    }
    if (o.keys.size() > 1000000000ull) {
      *error = "--verify tracks every key: use a key range of at most 1000000000 keys";
      return false;
    }
  }
  if (!o.tls) {
    for (std::string_view flag : kTlsFlags) {
      if (flag != "--tls" && has(flag)) {
        *error = std::string(flag) + " needs --tls";
        return false;
      }
    }
  }
  if (has("--cert") != has("--key")) {
    *error = "--cert and --key go together: the client certificate and its private key";
    return false;
  }
  for (const CommandSpec& c : o.commands) {
    if (c.argv.empty()) {
      *error = "empty --command";
      return false;
    }
  }
  *out = std::move(o);
  return true;
}

bool isTlsFlag(std::string_view flag) {
  for (std::string_view f : kTlsFlags) {
    if (f == flag) {
      return true;
    }
  }
  return false;
}

std::string helpText() {
  return R"(Usage: shardbench [FLAGS] [COMMAND ARGS...]
       shardbench merge [-q|--csv] [--json-out-file OUT] a.json b.json ...
       shardbench matrix [FLAGS]          proxy workers x shards QPS matrix (matrix --help)
       shardbench scenario FILE [FLAGS]   a seed report's table from conf/scenarios (--help)

A load generator for Redis and RESP endpoints (shardproxy, Redis, Redis Cluster proxies). It takes
the flags of redis-benchmark and of memtier_benchmark; where both tools have a flag it means the
same thing here. Where the two disagree the short flag follows redis-benchmark (-c, -n, -t) and the
long one memtier (--clients, --requests, --threads).

Connection:
  -h, --host HOST           server host (default 127.0.0.1)
  -s, --server HOST         the same (memtier spelling; redis-benchmark's -s socket is not supported)
  -p, --port PORT           server port (default 6379)
  -a, --authenticate PASS   AUTH password (also --auth)
      --user USER           ACL user name, sent as AUTH USER PASS
      --dbnum N             SELECT N after connecting (also --select-db)
      --connect-timeout MS  give up connecting after MS milliseconds (default 5000)
      --request-timeout MS  end the run with an error when a request has no reply after MS
                            milliseconds, e.g. a stalled server (default 10000)
      --source-address A[,A...]  bind the connections to these local addresses in turn
                            (repeatable); each address has its own ephemeral ports, so
                            more connections than net.ipv4.ip_local_port_range holds can
                            reach one server port (e.g. 127.0.0.1,127.0.0.2 on loopback)
      --max-reconnects N    reconnect up to N times per thread when the server closes a
                            connection; the requests in flight count as errors (default 0: a
                            closed connection ends the run with an error)

TLS (memtier_benchmark's flags; redis-benchmark's --insecure, --tls-ciphers too):
      --tls                 connect with TLS; each connection's handshake completes before
                            AUTH/SELECT and before any request is timed
      --cacert FILE         CA certificate(s) the server's certificate must chain to (PEM;
                            default: the system's CA store)
      --cert FILE           client certificate (PEM), for servers that verify clients
                            (redis tls-auth-clients); needs --key
      --key FILE            the client certificate's private key (PEM)
      --sni NAME            server name sent as SNI and verified against the certificate
                            (default: the host; an IP address is checked as an IP SAN)
      --tls-skip-verify     do not verify the server's certificate (also --insecure)
      --tls-protocols LIST  allowed versions, e.g. "TLSv1.2 TLSv1.3" (default: 1.2 and up)
      --tls-ciphers LIST    TLS 1.2 cipher list (OpenSSL syntax)
      --tls-ciphersuites LIST  TLS 1.3 cipher suites (OpenSSL syntax)

Load shape:
      --threads N           client threads, each with its own event loop (default 1)
  -c N                      connections in total, spread over the threads (default 50)
      --clients N           connections per thread (memtier); conflicts with -c
  -n N                      requests per test over all connections (default 100000)
      --requests N          requests per connection (memtier); conflicts with -n
      --test-time SECS      run each test for SECS seconds instead of a request count
      --time-limit SECS     end a request-count test (-n, --requests) after SECS seconds even
                            if not all requests were sent; the report shows how many were
  -P, --pipeline N          requests in flight per connection (default 1)
      --rate R              total requests per second over all connections; latency is then
                            measured from each request's intended send time (no coordinated
                            omission)
  -k 1|0                    keep-alive (default 1); -k 0 reconnects before every request
      --reconnect-interval N  reconnect every N requests per connection (short connections)

Workload (one of -t, --ratio, --command or a command after the flags; default --ratio 1:10):
  -t, --tests LIST          redis-benchmark tests, comma-separated, run one after another with
                            -n requests each: ping_inline, ping_mbulk, ping, set, get, incr,
                            lpush, rpush, lpop, rpop, sadd, hset, spop, zadd, zpopmin, lrange,
                            lrange_100, lrange_300, lrange_500, lrange_600, mset
      --ratio S:G           memtier's SET:GET mix (default 1:10)
      --command 'CMD ...'   a command template (repeatable); placeholders __key__ (key prefix +
                            key number), __rand_int__ (key number, 12 digits) and __data__
      --command-ratio N     weight of the preceding --command (default 1)
      --command-key-pattern P  key pattern of the preceding --command: S, P, R, G or Z (default R)
  -d, --data-size BYTES     value size (default 3 with -t or a command after the flags, else 32)
      --data-size-range MIN-MAX  value size drawn uniformly from MIN..MAX for each request
      --random-data         random bytes instead of 'x' filler
  -r N                      key space: key numbers 0..N-1 (redis-benchmark -r; memtier
                            --key-maximum=N-1). Without -r, -t tests use the single key
                            "key:__rand_int__" exactly like redis-benchmark
      --key-prefix PREFIX   prefix of __key__ (default "memtier-")
      --key-minimum N       smallest key number (default 0)
      --key-maximum N       largest key number (default 10000000)
      --key-pattern S:G     key patterns of writes:reads, each one of S (sequential: all
                            connections together walk the range in order), P (parallel: each
                            connection walks its own slice), R (uniform random), G (gaussian),
                            Z (zipfian); default R:R
      --key-median X        centre of the G pattern (default: middle of the range)
      --key-stddev X        spread of the G pattern (default: range / 6)
      --zipf-theta X        exponent of the Z pattern (default 0.99; also --key-zipf-exp)
      --randomize           seed from the clock instead of the fixed default seed
      --distinct-client-seed  accepted for memtier compatibility: every connection always has
                            its own seed (derived from --seed)
      --seed N              base random seed (default fixed, so runs are reproducible)

Checking:
      --verify              every SET value carries its key number and a sequence number and
                            every GET checks it against the last value the same connection wrote
                            (each connection owns its own keys); mismatches are counted, the
                            first ones printed, and the exit status is 3. A SET answered with an
                            error (or never answered) leaves its key unknown until the next +OK:
                            reads of it are counted as unverified unless no write could explain
                            them
      --verify-allow-loss   with --verify, shards may lose data (restarted empty, eviction): a
                            nil read of an acknowledged write counts as lost, not as a mismatch
      --verify-print N      how many mismatches to print (default 5)

Output:
  -q, --quiet               one line per test: "SET: 123456.78 requests per second, p50=0.2 msec"
      --csv                 redis-benchmark CSV: test,rps,avg,min,p50,p95,p99,max latency (ms)
      --json-out-file FILE  all numbers plus the full latency histograms, for `shardbench merge`
      --out-file FILE       write the report to FILE instead of stdout (also -o)
      --print-percentiles LIST  after the report, one table per command with the latency
                            of each percentile in LIST, e.g. 50,90,99,99.9,99.99 (each above 0
                            and at most 100; 100 is the max); also added to --json-out-file
      --hdr-file-prefix PREFIX  write PREFIX_<COMMAND>.hgrm per command, HdrHistogram's
                            percentile distribution text in ms (as memtier; HdrHistogram's
                            plotter reads it), and PREFIX_percentiles.svg, a latency by
                            percentile chart
      --no-progress         no progress line (it is only ever shown when stderr is a terminal;
                            also --hide-histogram)
      --help                this text
      --version             print the version

Exit status: 0 success; 1 connection failure, timeout, AUTH failure, closed connection or error
replies; 2 bad flags; 3 --verify mismatches; 130 interrupted (Ctrl-C; the partial report is printed).
)";
}

}  // namespace sp::bench
