// OpenSSL contexts from the tls and backend.tls settings.
#include "tls/tls_context.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <strings.h>

#include <algorithm>
#include <sstream>
#include <utility>

namespace sp::tls {

namespace {

// `what` failed, with OpenSSL's reason when it queued one.
Status fail(const std::string& what) {
  std::string detail = lastError();
  return Status::failure(detail.empty() ? what : what + ": " + detail);
}

// Settings both sides share: protocol range and cipher lists.
Status applyCommon(SSL_CTX* ctx, const std::string& protocols, const std::string& ciphers,
                   const std::string& ciphersuites) {
  int min_version = TLS1_2_VERSION;
  int max_version = 0;  // the highest OpenSSL knows
  if (!protocols.empty() && !parseProtocols(protocols, &min_version, &max_version)) {
    return Status::failure("protocols '" + protocols + "': expected names among TLSv1.2 TLSv1.3");
  }
  if (SSL_CTX_set_min_proto_version(ctx, min_version) != 1 ||
      SSL_CTX_set_max_proto_version(ctx, max_version) != 1) {
    return fail("protocols '" + protocols + "'");
  }
  if (!ciphers.empty() && SSL_CTX_set_cipher_list(ctx, ciphers.c_str()) != 1) {
    return fail("ciphers '" + ciphers + "'");
  }
  if (!ciphersuites.empty() && SSL_CTX_set_ciphersuites(ctx, ciphersuites.c_str()) != 1) {
    return fail("ciphersuites '" + ciphersuites + "'");
  }
  // Buffers move between calls (the owner's output buffer may grow), and partial writes are
  // reported as such.
  SSL_CTX_set_mode(ctx, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_ENABLE_PARTIAL_WRITE |
                            SSL_MODE_RELEASE_BUFFERS);
  return Status();
}

Status loadKeyPair(SSL_CTX* ctx, const std::string& cert_file, const std::string& key_file) {
  if (SSL_CTX_use_certificate_chain_file(ctx, cert_file.c_str()) != 1) {
    return fail("cannot load certificate " + cert_file);
  }
  if (SSL_CTX_use_PrivateKey_file(ctx, key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    // OpenSSL 3 compares the key with the certificate as it loads it.
    const unsigned long e = ERR_peek_last_error();
    if (ERR_GET_LIB(e) == ERR_LIB_X509 && ERR_GET_REASON(e) == X509_R_KEY_VALUES_MISMATCH) {
      ERR_clear_error();
      return Status::failure("private key " + key_file + " does not match certificate " +
                             cert_file);
    }
    return fail("cannot load private key " + key_file);
  }
  if (SSL_CTX_check_private_key(ctx) != 1) {
    return fail("private key " + key_file + " does not match certificate " + cert_file);
  }
  return Status();
}

// The certificates a context holds (its own chain and its CA store) are shared by every worker's
// connections. OpenSSL computes each certificate's cached extensions (key identifiers, purpose
// flags) the first time a verification looks at it, and two threads doing that at once both write
// the cache (OpenSSL 3.0 takes the lock only after checking it, and ThreadSanitizer reports the
// handshake race). Computing them here, on the building thread, leaves the workers only reads.
void computeCertificateCaches(SSL_CTX* ctx) {
  if (X509* own = SSL_CTX_get0_certificate(ctx)) {
    X509_check_purpose(own, -1, 0);
  }
  STACK_OF(X509)* chain = nullptr;
  if (SSL_CTX_get0_chain_certs(ctx, &chain) == 1 && chain != nullptr) {
    for (int i = 0; i < sk_X509_num(chain); ++i) {
      X509_check_purpose(sk_X509_value(chain, i), -1, 0);
    }
  }
  STACK_OF(X509_OBJECT)* objects = X509_STORE_get0_objects(SSL_CTX_get_cert_store(ctx));
  for (int i = 0; i < sk_X509_OBJECT_num(objects); ++i) {
    if (X509* ca = X509_OBJECT_get0_X509(sk_X509_OBJECT_value(objects, i))) {
      X509_check_purpose(ca, -1, 0);
    }
  }
}

struct CtxOwner {
  SSL_CTX* ctx;
  ~CtxOwner() { SSL_CTX_free(ctx); }
  SSL_CTX* release() { return std::exchange(ctx, nullptr); }
};

}  // namespace

bool parseProtocols(const std::string& text, int* min_version, int* max_version) {
  std::istringstream in(text);
  std::string name;
  int lo = 0;
  int hi = 0;
  while (in >> name) {
    int v = 0;
    if (strcasecmp(name.c_str(), "TLSv1.2") == 0) {
      v = TLS1_2_VERSION;
    } else if (strcasecmp(name.c_str(), "TLSv1.3") == 0) {
      v = TLS1_3_VERSION;
    } else {
      return false;  // TLSv1 and TLSv1.1 included: broken, and refused here on purpose
    }
    lo = lo == 0 ? v : std::min(lo, v);
    hi = std::max(hi, v);
  }
  if (lo == 0) {
    return false;
  }
  *min_version = lo;
  *max_version = hi;
  return true;
}

std::string lastError() {
  // The first error queued is the cause ("No such file or directory"); later ones say what failed
  // because of it ("system lib"), which the caller's own words say better.
  std::string text;
  while (unsigned long e = ERR_get_error()) {
    if (!text.empty()) {
      continue;
    }
    const char* reason = ERR_reason_error_string(e);
    if (reason != nullptr) {
      text = reason;
    } else {
      char buf[256];
      ERR_error_string_n(e, buf, sizeof buf);
      text = buf;
    }
  }
  return text;
}

Status TlsContext::makeServer(const ServerSettings& s, std::shared_ptr<const TlsContext>* out) {
  ERR_clear_error();
  CtxOwner owner{SSL_CTX_new(TLS_server_method())};
  if (owner.ctx == nullptr) {
    return fail("cannot create a TLS context");
  }
  if (Status common = applyCommon(owner.ctx, s.protocols, s.ciphers, s.ciphersuites);
      !common.ok()) {
    return common;
  }
  if (Status pair = loadKeyPair(owner.ctx, s.cert_file, s.key_file); !pair.ok()) {
    return pair;
  }
  if (!s.ca_cert_file.empty()) {
    if (SSL_CTX_load_verify_locations(owner.ctx, s.ca_cert_file.c_str(), nullptr) != 1) {
      return fail("cannot load CA certificates " + s.ca_cert_file);
    }
    // Clients are told which CAs are accepted, as redis-server does.
    if (STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(s.ca_cert_file.c_str())) {
      SSL_CTX_set_client_CA_list(owner.ctx, names);
    }
  }
  if (s.auth_clients != AuthClients::kNo) {
    if (s.ca_cert_file.empty()) {
      return Status::failure("auth_clients needs ca_cert_file to verify client certificates");
    }
    int mode = SSL_VERIFY_PEER;
    if (s.auth_clients == AuthClients::kYes) {
      mode |= SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
    }
    SSL_CTX_set_verify(owner.ctx, mode, nullptr);
  }
  // Session resumption across the proxy's workers would need a shared cache; tickets carry the
  // state instead, so a reconnecting client resumes without one.
  SSL_CTX_set_session_cache_mode(owner.ctx, SSL_SESS_CACHE_OFF);
  computeCertificateCaches(owner.ctx);
  const bool verify = s.auth_clients != AuthClients::kNo;
  out->reset(new TlsContext(owner.release(), true, verify, ""));
  return Status();
}

Status TlsContext::makeClient(const ClientSettings& s, std::shared_ptr<const TlsContext>* out) {
  ERR_clear_error();
  CtxOwner owner{SSL_CTX_new(TLS_client_method())};
  if (owner.ctx == nullptr) {
    return fail("cannot create a TLS context");
  }
  if (Status common = applyCommon(owner.ctx, s.protocols, s.ciphers, s.ciphersuites);
      !common.ok()) {
    return common;
  }
  if (s.cert_file.empty() != s.key_file.empty()) {
    return Status::failure("a client certificate needs both cert_file and key_file");
  }
  if (!s.cert_file.empty()) {
    if (Status pair = loadKeyPair(owner.ctx, s.cert_file, s.key_file); !pair.ok()) {
      return pair;
    }
  }
  if (!s.ca_cert_file.empty()) {
    if (SSL_CTX_load_verify_locations(owner.ctx, s.ca_cert_file.c_str(), nullptr) != 1) {
      return fail("cannot load CA certificates " + s.ca_cert_file);
    }
  } else if (SSL_CTX_set_default_verify_paths(owner.ctx) != 1) {
    return fail("cannot load the system's CA certificates");
  }
  SSL_CTX_set_verify(owner.ctx, s.verify ? SSL_VERIFY_PEER : SSL_VERIFY_NONE, nullptr);
  computeCertificateCaches(owner.ctx);
  out->reset(new TlsContext(owner.release(), false, s.verify, s.server_name));
  return Status();
}

TlsContext::~TlsContext() { SSL_CTX_free(ctx_); }

}  // namespace sp::tls
