// Scalar value parsers shared by the YAML loader and the command line.
#include "config/value_parser.h"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <limits>

namespace sp::config {
namespace {

std::string quoted(std::string_view text) {
  std::string out = "'";
  out.append(text);
  out += "'";
  return out;
}

bool allDigits(std::string_view text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Digits into *out; false on overflow of uint64_t. The caller has checked allDigits().
bool digitsToU64(std::string_view text, uint64_t* out) {
  uint64_t value = 0;
  for (char c : text) {
    const uint64_t digit = static_cast<uint64_t>(c - '0');
    if (value > (std::numeric_limits<uint64_t>::max() - digit) / 10) {
      return false;
    }
    value = value * 10 + digit;
  }
  *out = value;
  return true;
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

}  // namespace

Status parseUnsigned(std::string_view text, uint64_t max, uint64_t* out) {
  if (!allDigits(text)) {
    const char* expected = (!text.empty() && text[0] == '-') ? "expected a non-negative integer"
                                                             : "expected an integer";
    return Status::failure(std::string(expected) + ", got " + quoted(text));
  }
  uint64_t value = 0;
  if (!digitsToU64(text, &value) || value > max) {
    return Status::failure("value " + std::string(text) + " is too large (at most " +
                           std::to_string(max) + ")");
  }
  *out = value;
  return Status();
}

Status parseSize(std::string_view text, uint64_t max, uint64_t* out) {
  struct Unit {
    std::string_view name;
    int shift;
  };
  static constexpr std::array<Unit, 8> kUnits = {{
      {"", 0},
      {"b", 0},
      {"k", 10},
      {"kb", 10},
      {"m", 20},
      {"mb", 20},
      {"g", 30},
      {"gb", 30},
  }};
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') {
    ++digits;
  }
  const std::string_view number = text.substr(0, digits);
  std::string_view unit = text.substr(digits);
  const bool spaced = !unit.empty() && unit.front() == ' ';
  while (!unit.empty() && unit.front() == ' ') {
    unit.remove_prefix(1);
  }
  const std::string unit_lower = lower(unit);
  int shift = -1;
  for (const Unit& u : kUnits) {
    if (unit_lower == u.name) {
      shift = u.shift;
    }
  }
  if (number.empty() || shift < 0 || (spaced && unit.empty())) {
    return Status::failure("expected a size (e.g. 512mb, 64kb, 1024), got " + quoted(text));
  }
  uint64_t value = 0;
  if (!digitsToU64(number, &value) || value > (std::numeric_limits<uint64_t>::max() >> shift) ||
      (value << shift) > max) {
    return Status::failure("size " + quoted(text) + " is too large (at most " +
                           std::to_string(max) + " bytes)");
  }
  *out = value << shift;
  return Status();
}

Status parsePort(std::string_view text, uint16_t* out) {
  uint64_t value = 0;
  if (!allDigits(text)) {
    return Status::failure("expected a port number, got " + quoted(text));
  }
  if (!digitsToU64(text, &value) || value == 0 || value > 65535) {
    return Status::failure("port must be 1..65535, got " + quoted(text));
  }
  *out = static_cast<uint16_t>(value);
  return Status();
}

bool isValidHost(std::string_view host) {
  if (host.empty() || host.size() > 253) {
    return false;
  }
  if (host.find(':') != std::string_view::npos) {
    // IPv6 literal, possibly with a %zone suffix (fe80::1%eth0).
    std::string addr(host.substr(0, host.find('%')));
    in6_addr parsed{};
    return inet_pton(AF_INET6, addr.c_str(), &parsed) == 1;
  }
  return std::all_of(host.begin(), host.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_';
  });
}

Status parseHostPort(std::string_view text, std::string* host, uint16_t* port) {
  std::string_view host_part;
  std::string_view port_part;
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return Status::failure("expected [ipv6]:port, got " + quoted(text));
    }
    host_part = text.substr(1, close - 1);
    port_part = text.substr(close + 2);
    if (host_part.find(':') == std::string_view::npos || !isValidHost(host_part)) {
      return Status::failure("invalid IPv6 address in " + quoted(text));
    }
  } else {
    const size_t colon = text.rfind(':');
    if (colon == std::string_view::npos || colon == 0) {
      return Status::failure("expected host:port, got " + quoted(text));
    }
    host_part = text.substr(0, colon);
    port_part = text.substr(colon + 1);
    if (host_part.find(':') != std::string_view::npos) {
      return Status::failure("expected host:port, got " + quoted(text) +
                             " (write IPv6 as [addr]:port)");
    }
    if (!isValidHost(host_part)) {
      return Status::failure("invalid host " + quoted(host_part) + " in " + quoted(text));
    }
  }
  uint16_t parsed_port = 0;
  if (Status port_status = parsePort(port_part, &parsed_port); !port_status.ok()) {
    return port_status;
  }
  *host = std::string(host_part);
  *port = parsed_port;
  return Status();
}

Status parseTlsListen(std::string_view text, std::string* host, uint16_t* port) {
  if (allDigits(text)) {
    host->clear();
    if (text == "0") {
      *port = 0;
      return Status();
    }
    return parsePort(text, port);
  }
  return parseHostPort(text, host, port);
}

bool sameSettingName(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return x == y || (x == '_' && y == '-') || (x == '-' && y == '_');
         });
}

bool parseAuthClients(std::string_view text, tls::AuthClients* out) {
  const std::string word = lower(text);
  if (word == "no" || word == "false") {
    *out = tls::AuthClients::kNo;
  } else if (word == "optional") {
    *out = tls::AuthClients::kOptional;
  } else if (word == "yes" || word == "true") {
    *out = tls::AuthClients::kYes;
  } else {
    return false;
  }
  return true;
}

bool isLogLevel(std::string_view level) {
  static constexpr std::array<std::string_view, 7> kLevels = {"trace", "debug",    "info", "warn",
                                                              "error", "critical", "off"};
  return std::find(kLevels.begin(), kLevels.end(), level) != kLevels.end();
}

Status parseFileMode(std::string_view text, uint32_t* out) {
  uint32_t mode = 0;
  const bool digits =
      !text.empty() && text.size() <= 4 &&
      std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '7'; });
  if (digits) {
    for (char c : text) {
      mode = mode * 8 + static_cast<uint32_t>(c - '0');
    }
  }
  if (!digits || mode > 0777) {
    return Status::failure("expected an octal file mode 0..777 (e.g. 660), got " + quoted(text));
  }
  *out = mode;
  return Status();
}

Status parseServerAddress(std::string_view text, std::string* host, uint16_t* port) {
  std::string_view path = text;
  if (path.starts_with("unix:")) {
    path.remove_prefix(5);
  } else if (!isUnixPath(path)) {
    return parseHostPort(text, host, port);
  }
  if (!isUnixPath(path)) {
    return Status::failure("a Unix socket needs an absolute path, got " + quoted(text));
  }
  if (path.size() > kMaxUnixPathBytes) {
    return Status::failure("Unix socket path " + quoted(path) + " is longer than " +
                           std::to_string(kMaxUnixPathBytes) + " bytes");
  }
  *host = std::string(path);
  *port = 0;
  return Status();
}

std::string formatHostPort(std::string_view host, uint16_t port) {
  if (isUnixPath(host)) {
    return "unix:" + std::string(host);
  }
  std::string out;
  if (host.find(':') != std::string_view::npos) {
    out = "[" + std::string(host) + "]";
  } else {
    out = std::string(host);
  }
  out += ":" + std::to_string(port);
  return out;
}

bool parseReadFrom(std::string_view text, ReadFrom* out) {
  for (ReadFrom v : {ReadFrom::kPrimary, ReadFrom::kPreferReplica, ReadFrom::kReplicaOnly,
                     ReadFrom::kRoundRobin}) {
    if (text == readFromName(v)) {
      *out = v;
      return true;
    }
  }
  return false;
}

const char* readFromName(ReadFrom value) {
  switch (value) {
    case ReadFrom::kPrimary:
      return "primary";
    case ReadFrom::kPreferReplica:
      return "prefer-replica";
    case ReadFrom::kReplicaOnly:
      return "replica-only";
    case ReadFrom::kRoundRobin:
      return "round-robin";
  }
  return "primary";
}

bool parsePlacementKind(std::string_view text, route::PlacementKind* out) {
  for (route::PlacementKind kind :
       {route::PlacementKind::kClusterSlots, route::PlacementKind::kTwemproxy,
        route::PlacementKind::kCodis}) {
    if (route::placementKindName(kind) == text) {
      *out = kind;
      return true;
    }
  }
  return false;
}

std::string twemHashNames() {
  std::string out;
  for (size_t i = 0; i < route::kTwemHashCount; ++i) {
    out += i == 0 ? "" : ", ";
    out += route::twemHashName(static_cast<route::TwemHash>(i));
  }
  return out;
}

}  // namespace sp::config
