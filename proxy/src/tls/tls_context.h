// TLS settings made into an OpenSSL context: one for the proxy's listener (server side) and one for
// its shard connections (client side). A context is immutable once built and shared by pointer, so
// a reload builds a new one and swaps the pointer: connections made before keep the context they
// started with, new ones take the new one.
#pragma once

#include <memory>
#include <string>

#include "core/status.h"

using SSL_CTX = struct ssl_ctx_st;

namespace sp::tls {

// Whether the listener asks clients for a certificate (redis-server's tls-auth-clients).
enum class AuthClients { kNo, kOptional, kYes };

struct ServerSettings {
  std::string cert_file;     // PEM certificate (chain) the proxy presents
  std::string key_file;      // its private key
  std::string ca_cert_file;  // CA bundle that client certificates must chain to
  AuthClients auth_clients = AuthClients::kNo;
  std::string protocols;     // "TLSv1.2 TLSv1.3"; "" = OpenSSL's default (1.2 and up)
  std::string ciphers;       // TLS 1.2 cipher list; "" = default
  std::string ciphersuites;  // TLS 1.3 suites; "" = default
};

struct ClientSettings {
  std::string ca_cert_file;  // CA bundle the shard's certificate must chain to; "" = system store
  std::string cert_file;     // client certificate, for shards that verify clients ("" = none)
  std::string key_file;
  std::string server_name;  // SNI and the name verified; "" = each shard's own host
  bool verify = true;       // verify the shard's certificate chain and name
  std::string protocols;
  std::string ciphers;
  std::string ciphersuites;
};

class TlsContext {
 public:
  // The context into *out; a failure names the file or setting at fault and leaves *out alone.
  static Status makeServer(const ServerSettings& settings, std::shared_ptr<const TlsContext>* out);
  static Status makeClient(const ClientSettings& settings, std::shared_ptr<const TlsContext>* out);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  SSL_CTX* native() const { return ctx_; }
  bool isServer() const { return server_; }
  bool verifyPeer() const { return verify_; }
  const std::string& serverName() const { return server_name_; }

 private:
  TlsContext(SSL_CTX* ctx, bool server, bool verify, std::string server_name)
      : ctx_(ctx), server_(server), verify_(verify), server_name_(std::move(server_name)) {}

  SSL_CTX* ctx_;
  bool server_;
  bool verify_;
  std::string server_name_;
};

// "TLSv1.2 TLSv1.3" -> true with *min/*max set to OpenSSL version constants; false on another
// name. Redis's tls-protocols syntax (names separated by spaces, any order and case), except that
// TLSv1 and TLSv1.1, which redis-server still takes, are refused.
bool parseProtocols(const std::string& text, int* min_version, int* max_version);

// The first OpenSSL error queued on this thread, as text, and the queue cleared ("" when none).
std::string lastError();

}  // namespace sp::tls
