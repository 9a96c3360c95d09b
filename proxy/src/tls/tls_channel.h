// One TLS session over memory buffers, with no socket of its own: the connection that owns it feeds
// in the bytes it read and sends the bytes the channel produces, on whatever loop it runs. The same
// channel serves a client session (server side) and a shard connection (client side).
//
//   socket --read--> feed() --> [SSL] --> readPlain() --> parser
//   replies --> writePlain() --> [SSL] --> takeCipher() --write--> socket
//
// Plaintext written before the handshake has finished is not taken (writePlain returns 0); the
// owner keeps it and writes again once handshakeDone(). Handshake records, session tickets and
// alerts come out of takeCipher() like any other ciphertext, so after every feed() the owner sends
// whatever pendingCipher() reports.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "tls/tls_context.h"

using SSL = struct ssl_st;
using BIO = struct bio_st;

namespace sp::tls {

class TlsChannel {
 public:
  // Server side: accepts a handshake from a client.
  explicit TlsChannel(std::shared_ptr<const TlsContext> context);
  // Client side: `host` is the shard's host, used for SNI and verification unless the context
  // names a server_name. Call startHandshake() once the socket is connected.
  TlsChannel(std::shared_ptr<const TlsContext> context, std::string_view host);
  ~TlsChannel();
  TlsChannel(const TlsChannel&) = delete;
  TlsChannel& operator=(const TlsChannel&) = delete;

  // Client side: produces the ClientHello (then pendingCipher() > 0). False on failure.
  bool startHandshake();

  // Bytes read from the socket. Advances the handshake; false when the peer's bytes or
  // certificate are refused (error() says why).
  bool feed(const char* data, size_t n);

  // Decrypted bytes, at most `cap`, into dst: > 0 bytes, 0 when none are ready, -1 on failure.
  // After the peer's close_notify, peerClosed() is true and 0 is returned.
  ptrdiff_t readPlain(char* dst, size_t cap);

  // Whether plaintext is decrypted and waiting, or ciphertext is fed and not yet decrypted.
  bool hasBufferedInput() const;

  // Encrypts plaintext: the bytes taken (all of them once the handshake is done; 0 before), or -1
  // on failure.
  ptrdiff_t writePlain(const char* src, size_t n);

  // Ciphertext waiting to be sent.
  size_t pendingCipher() const;
  // Moves up to `cap` bytes of it into dst; returns the count.
  size_t takeCipher(char* dst, size_t cap);

  bool handshakeStarted() const { return handshake_started_; }  // a byte sent or received
  bool handshakeDone() const { return handshake_done_; }
  bool peerClosed() const { return peer_closed_; }
  const std::string& error() const { return error_; }
  // The negotiated protocol ("TLSv1.3") and cipher, for logs and CLIENT INFO.
  std::string_view protocol() const;
  std::string_view cipher() const;
  // Whether the peer presented a certificate that verified (server side: a client certificate).
  bool peerVerified() const;

 private:
  void attachMemoryBios();  // ssl_ with in_ and out_, both owned by it
  bool advanceHandshake();
  bool failWith(std::string_view what);

  std::shared_ptr<const TlsContext> context_;
  SSL* ssl_ = nullptr;
  BIO* in_ = nullptr;   // ciphertext from the peer; owned by ssl_
  BIO* out_ = nullptr;  // ciphertext to the peer; owned by ssl_
  bool handshake_started_ = false;
  bool handshake_done_ = false;
  bool peer_closed_ = false;
  std::string error_;
};

}  // namespace sp::tls
