// Parsers for the scalar values found in config files and flags: integers, sizes, ports, hosts
// and host:port addresses. Pure functions: each fails with a message without a path ("expected a
// size, got 'abc'"); the caller adds the path.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "config/config.h"
#include "core/status.h"
#include "tls/tls_context.h"

namespace sp::config {

// Decimal digits only: no sign, no whitespace, no trailing garbage; value <= max.
Status parseUnsigned(std::string_view text, uint64_t max, uint64_t* out);

// A byte size: an integer with an optional unit b, k/kb, m/mb, g/gb (powers of 1024,
// case-insensitive, optional spaces before the unit), e.g. "512mb", "64KB", "100"; value <= max.
Status parseSize(std::string_view text, uint64_t max, uint64_t* out);

// A TCP port, 1..65535.
Status parsePort(std::string_view text, uint16_t* out);

// A hostname ([A-Za-z0-9._-]) or an IPv4/IPv6 literal (IPv6 without brackets, optional %zone).
bool isValidHost(std::string_view host);

// "host:port", "[ipv6]:port". *host gets the host without brackets.
Status parseHostPort(std::string_view text, std::string* host, uint16_t* port);

// Unix socket paths: absolute, and short enough for sockaddr_un (107 bytes).
inline constexpr size_t kMaxUnixPathBytes = 107;
// A Unix socket's address is its absolute path; a host never starts with '/'.
inline bool isUnixPath(std::string_view host) { return !host.empty() && host.front() == '/'; }

// A file mode in octal, 0..777 ("660", "0660").
Status parseFileMode(std::string_view text, uint32_t* out);

// A server's address: "host:port", "[ipv6]:port", or a Unix socket as "unix:/path" or "/path"
// (*host gets the path, *port 0).
Status parseServerAddress(std::string_view text, std::string* host, uint16_t* port);

// One of trace, debug, info, warn, error, critical, off (spdlog's names; lower case).
bool isLogLevel(std::string_view level);

// tls.listen: "port" (on listen.host: *host left "") or "host:port"; "0" = no TLS listener.
Status parseTlsListen(std::string_view text, std::string* host, uint16_t* port);

// Whether a config key and a flag's spelling of it match ("cert_file" and "cert-file").
bool sameSettingName(std::string_view a, std::string_view b);

// The string settings both TLS sides have (cert_file, key_file, ca_cert_file, protocols, ciphers,
// ciphersuites), by key or flag spelling; nullptr for any other name.
template <typename Settings>
std::string* tlsStringSetting(Settings* t, std::string_view key) {
  std::pair<std::string_view, std::string*> fields[] = {
      {"cert_file", &t->cert_file}, {"key_file", &t->key_file}, {"ca_cert_file", &t->ca_cert_file},
      {"protocols", &t->protocols}, {"ciphers", &t->ciphers},   {"ciphersuites", &t->ciphersuites}};
  for (const auto& [name, field] : fields) {
    if (sameSettingName(name, key)) {
      return field;
    }
  }
  return nullptr;
}

// tls.auth_clients: no, optional or yes (redis-server's tls-auth-clients words).
bool parseAuthClients(std::string_view text, tls::AuthClients* out);

// "host:port" for logs and messages, with brackets around IPv6 literals; "unix:/path" for a
// Unix socket.
std::string formatHostPort(std::string_view host, uint16_t port);

// "primary", "prefer-replica", "replica-only", "round-robin".
bool parseReadFrom(std::string_view text, ReadFrom* out);
// placement.kind: "cluster_slots", "twemproxy" or "codis".
bool parsePlacementKind(std::string_view text, route::PlacementKind* out);
// "one_at_a_time, md5, ..." for error messages.
std::string twemHashNames();
const char* readFromName(ReadFrom value);

}  // namespace sp::config
