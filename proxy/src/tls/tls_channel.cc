// A TLS session over two memory BIOs.
#include "tls/tls_channel.h"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <climits>

namespace sp::tls {

namespace {

bool isIpAddress(const std::string& host) {
  unsigned char buf[sizeof(in6_addr)];
  return inet_pton(AF_INET, host.c_str(), buf) == 1 || inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

}  // namespace

TlsChannel::TlsChannel(std::shared_ptr<const TlsContext> context) : context_(std::move(context)) {
  attachMemoryBios();
  SSL_set_accept_state(ssl_);
}

void TlsChannel::attachMemoryBios() {
  ssl_ = SSL_new(context_->native());
  in_ = BIO_new(BIO_s_mem());
  out_ = BIO_new(BIO_s_mem());
  // An empty memory BIO reports "retry later" rather than end of file.
  BIO_set_mem_eof_return(in_, -1);
  SSL_set_bio(ssl_, in_, out_);
}

TlsChannel::TlsChannel(std::shared_ptr<const TlsContext> context, std::string_view host)
    : context_(std::move(context)) {
  attachMemoryBios();
  SSL_set_connect_state(ssl_);
  const std::string name =
      context_->serverName().empty() ? std::string(host) : context_->serverName();
  if (isIpAddress(name)) {
    // No SNI for an address (RFC 6066); the certificate must name it as an IP SAN.
    if (context_->verifyPeer()) {
      X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl_), name.c_str());
    }
  } else if (!name.empty()) {
    SSL_set_tlsext_host_name(ssl_, name.c_str());
    if (context_->verifyPeer()) {
      SSL_set1_host(ssl_, name.c_str());
    }
  }
}

TlsChannel::~TlsChannel() { SSL_free(ssl_); }  // frees both BIOs

bool TlsChannel::failWith(std::string_view what) {
  std::string detail;
  // The verify result is only the cause where the peer is verified: without verification
  // OpenSSL still records why the chain would have failed, and the handshake went on regardless.
  const long verify = SSL_get_verify_result(ssl_);
  if (verify != X509_V_OK && context_->verifyPeer()) {
    detail = std::string("certificate verify failed: ") + X509_verify_cert_error_string(verify);
  }
  const std::string queued = lastError();
  if (detail.empty()) {
    detail = queued;
  }
  error_ = detail.empty() ? std::string(what) : std::string(what) + ": " + detail;
  return false;
}

bool TlsChannel::startHandshake() { return advanceHandshake(); }

bool TlsChannel::advanceHandshake() {
  if (handshake_done_) {
    return true;
  }
  handshake_started_ = true;
  ERR_clear_error();
  const int rc = SSL_do_handshake(ssl_);
  if (rc == 1) {
    handshake_done_ = true;
    return true;
  }
  const int err = SSL_get_error(ssl_, rc);
  if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
    return true;
  }
  return failWith("TLS handshake failed");
}

bool TlsChannel::feed(const char* data, size_t n) {
  while (n > 0) {
    const int chunk = static_cast<int>(std::min<size_t>(n, INT_MAX));
    if (BIO_write(in_, data, chunk) != chunk) {
      return failWith("TLS input buffer");
    }
    data += chunk;
    n -= static_cast<size_t>(chunk);
  }
  return advanceHandshake();
}

ptrdiff_t TlsChannel::readPlain(char* dst, size_t cap) {
  if (!handshake_done_ || peer_closed_ || cap == 0) {
    return 0;
  }
  ERR_clear_error();
  const int rc = SSL_read(ssl_, dst, static_cast<int>(std::min<size_t>(cap, INT_MAX)));
  if (rc > 0) {
    return rc;
  }
  const int err = SSL_get_error(ssl_, rc);
  if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
    return 0;
  }
  if (err == SSL_ERROR_ZERO_RETURN) {
    peer_closed_ = true;
    return 0;
  }
  failWith("TLS read failed");
  return -1;
}

bool TlsChannel::hasBufferedInput() const {
  // SSL_has_pending() only sees what SSL_read already pulled out of in_: records fed after the
  // one being read wait in the BIO itself.
  return handshake_done_ && !peer_closed_ &&
         (SSL_has_pending(ssl_) == 1 || BIO_ctrl_pending(in_) > 0);
}

ptrdiff_t TlsChannel::writePlain(const char* src, size_t n) {
  if (!handshake_done_) {
    return 0;
  }
  size_t taken = 0;
  while (taken < n) {
    ERR_clear_error();
    const int chunk = static_cast<int>(std::min<size_t>(n - taken, INT_MAX));
    const int rc = SSL_write(ssl_, src + taken, chunk);
    if (rc <= 0) {
      const int err = SSL_get_error(ssl_, rc);
      if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
        break;  // a renegotiation or key update wants the peer first; the owner retries
      }
      failWith("TLS write failed");
      return -1;
    }
    taken += static_cast<size_t>(rc);
  }
  return static_cast<ptrdiff_t>(taken);
}

size_t TlsChannel::pendingCipher() const { return BIO_ctrl_pending(out_); }

size_t TlsChannel::takeCipher(char* dst, size_t cap) {
  const int rc = BIO_read(out_, dst, static_cast<int>(std::min<size_t>(cap, INT_MAX)));
  return rc > 0 ? static_cast<size_t>(rc) : 0;
}

std::string_view TlsChannel::protocol() const { return SSL_get_version(ssl_); }

std::string_view TlsChannel::cipher() const {
  const char* name = SSL_get_cipher_name(ssl_);
  return name != nullptr ? name : "";
}

bool TlsChannel::peerVerified() const {
  return SSL_get0_peer_certificate(ssl_) != nullptr && SSL_get_verify_result(ssl_) == X509_V_OK;
}

}  // namespace sp::tls
