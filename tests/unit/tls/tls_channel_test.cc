// TlsChannel: a server channel and a client channel pumped into each other in memory (whole
// buffers and one byte at a time): the handshake, data both ways up to 1 MiB, verification of the
// server's chain, name and IP address, client certificates (no / optional / yes), plaintext before
// the handshake, garbage instead of a ClientHello, and the peer's close_notify.
#include "tls/tls_channel.h"

#include <gtest/gtest.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "tls/tls_context.h"
#include "unit/tls/test_certs.h"

namespace sp::tls {
namespace {

using testing::testCerts;

std::shared_ptr<const TlsContext> serverContext(ServerSettings s = {}) {
  const auto& certs = testCerts();
  if (s.cert_file.empty()) {
    s.cert_file = certs.serverCert();
    s.key_file = certs.serverKey();
  }
  std::shared_ptr<const TlsContext> ctx;
  const Status made = TlsContext::makeServer(s, &ctx);
  EXPECT_TRUE(made.ok()) << made.message();
  return ctx;
}

std::shared_ptr<const TlsContext> clientContext(ClientSettings s = {}) {
  if (s.ca_cert_file.empty()) {
    s.ca_cert_file = testCerts().caCert();
  }
  std::shared_ptr<const TlsContext> ctx;
  const Status made = TlsContext::makeClient(s, &ctx);
  EXPECT_TRUE(made.ok()) << made.message();
  return ctx;
}

ClientSettings withClientCert() {
  ClientSettings s;
  s.cert_file = testCerts().clientCert();
  s.key_file = testCerts().clientKey();
  return s;
}

ServerSettings askingClients(AuthClients mode) {
  ServerSettings s;
  s.ca_cert_file = testCerts().caCert();
  s.auth_clients = mode;
  return s;
}

// Moves all of `from`'s ciphertext into `to`, `chunk` bytes per feed(). False when a feed() is
// refused (to.error() says why).
bool transfer(TlsChannel& from, TlsChannel& to, size_t chunk, bool* moved) {
  std::vector<char> buf(chunk);
  while (from.pendingCipher() > 0) {
    const size_t n = from.takeCipher(buf.data(), buf.size());
    if (n == 0) {
      ADD_FAILURE() << "pendingCipher() > 0 but takeCipher() gave nothing";
      return false;
    }
    *moved = true;
    if (!to.feed(buf.data(), n)) {
      return false;
    }
  }
  return true;
}

// Pumps ciphertext both ways until neither side has any left. False as soon as a side refuses
// what it is fed.
bool pump(TlsChannel& client, TlsChannel& server, size_t chunk = 64 * 1024) {
  for (int round = 0; round < 10000; ++round) {
    bool moved = false;
    if (!transfer(client, server, chunk, &moved) || !transfer(server, client, chunk, &moved)) {
      return false;
    }
    if (!moved) {
      return true;
    }
  }
  ADD_FAILURE() << "the channels never went quiet";
  return false;
}

// Everything readPlain() gives until it returns 0 (or -1, recorded in *failed).
std::string readAll(TlsChannel& ch, size_t cap = 16 * 1024, bool* failed = nullptr) {
  std::string out;
  std::vector<char> buf(cap);
  for (;;) {
    const ptrdiff_t n = ch.readPlain(buf.data(), buf.size());
    if (n < 0 && failed != nullptr) {
      *failed = true;
    }
    if (n <= 0) {
      return out;
    }
    out.append(buf.data(), static_cast<size_t>(n));
  }
}

// Writes all of `data` on `from`, then pumps it over and reads it on `to`.
std::string roundTrip(TlsChannel& from, TlsChannel& to, TlsChannel& client, TlsChannel& server,
                      std::string_view data, size_t chunk = 64 * 1024) {
  EXPECT_EQ(from.writePlain(data.data(), data.size()), static_cast<ptrdiff_t>(data.size()));
  std::string got;
  // With one-byte feeds the reader drains as the bytes arrive, as a connection would.
  for (int round = 0; round < 100000 && got.size() < data.size(); ++round) {
    bool moved = false;
    EXPECT_TRUE(transfer(client, server, chunk, &moved)) << server.error();
    EXPECT_TRUE(transfer(server, client, chunk, &moved)) << client.error();
    got += readAll(to);
    if (!moved) {
      break;
    }
  }
  return got;
}

bool contains(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

struct Pair {
  TlsChannel server;
  TlsChannel client;
  Pair(std::shared_ptr<const TlsContext> server_ctx, std::shared_ptr<const TlsContext> client_ctx,
       std::string_view host = "localhost")
      : server(std::move(server_ctx)), client(std::move(client_ctx), host) {}

  // Starts the client's handshake and pumps until quiet; true when both sides are done.
  bool handshake(size_t chunk = 64 * 1024) {
    if (!client.startHandshake()) {
      return false;
    }
    EXPECT_GT(client.pendingCipher(), 0u);
    return pump(client, server, chunk) && client.handshakeDone() && server.handshakeDone();
  }
};

TEST(TlsChannelTest, CertificatesAreMade) { ASSERT_EQ(testCerts().error, "") << testCerts().error; }

TEST(TlsChannelTest, HandshakeCompletesAndDataFlowsBothWays) {
  Pair p(serverContext(), clientContext());
  EXPECT_FALSE(p.client.handshakeDone());
  EXPECT_FALSE(p.server.handshakeDone());
  ASSERT_TRUE(p.handshake()) << p.client.error() << " / " << p.server.error();
  EXPECT_EQ(p.client.protocol(), "TLSv1.3");
  EXPECT_EQ(p.server.protocol(), "TLSv1.3");
  EXPECT_FALSE(p.client.cipher().empty());
  EXPECT_EQ(p.client.cipher(), p.server.cipher());
  EXPECT_TRUE(p.client.peerVerified());
  EXPECT_FALSE(p.server.peerVerified());  // no client certificate asked for
  EXPECT_EQ(p.client.error(), "");
  EXPECT_EQ(p.server.error(), "");

  EXPECT_EQ(roundTrip(p.client, p.server, p.client, p.server, "*1\r\n$4\r\nPING\r\n"),
            "*1\r\n$4\r\nPING\r\n");
  EXPECT_EQ(roundTrip(p.server, p.client, p.client, p.server, "+PONG\r\n"), "+PONG\r\n");
  // And again, several writes before one pump.
  ASSERT_EQ(p.client.writePlain("ab", 2), 2);
  ASSERT_EQ(p.client.writePlain("cd", 2), 2);
  ASSERT_TRUE(pump(p.client, p.server));
  EXPECT_EQ(readAll(p.server), "abcd");
  EXPECT_FALSE(p.server.peerClosed());
  EXPECT_FALSE(p.client.peerClosed());
}

TEST(TlsChannelTest, OneMebibyteBothWays) {
  Pair p(serverContext(), clientContext());
  ASSERT_TRUE(p.handshake());
  std::string big(1 << 20, '\0');
  for (size_t i = 0; i < big.size(); ++i) {
    big[i] = static_cast<char>((i * 131 + i / 7) & 0xff);
  }
  const std::string to_server = roundTrip(p.client, p.server, p.client, p.server, big);
  EXPECT_EQ(to_server.size(), big.size());
  EXPECT_TRUE(to_server == big);
  std::string reply = big;
  std::reverse(reply.begin(), reply.end());
  const std::string to_client = roundTrip(p.server, p.client, p.client, p.server, reply);
  EXPECT_EQ(to_client.size(), reply.size());
  EXPECT_TRUE(to_client == reply);
}

TEST(TlsChannelTest, ReadsInSmallPiecesAcrossRecords) {
  Pair p(serverContext(), clientContext());
  ASSERT_TRUE(p.handshake());
  std::string big(100000, 'x');
  for (size_t i = 0; i < big.size(); ++i) {
    big[i] = static_cast<char>('a' + i % 26);
  }
  ASSERT_EQ(p.client.writePlain(big.data(), big.size()), static_cast<ptrdiff_t>(big.size()));
  ASSERT_TRUE(pump(p.client, p.server));
  EXPECT_EQ(readAll(p.server, 7), big);
}

TEST(TlsChannelTest, OneByteAtATime) {
  Pair p(serverContext(), clientContext());
  ASSERT_TRUE(p.handshake(1)) << p.client.error() << " / " << p.server.error();
  EXPECT_EQ(roundTrip(p.client, p.server, p.client, p.server, "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n", 1),
            "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n");
  const std::string value(5000, 'v');
  EXPECT_EQ(roundTrip(p.server, p.client, p.client, p.server, value, 1), value);
}

TEST(TlsChannelTest, BufferedInputIsReportedWhileRecordsWait) {
  // A connection that reads plaintext into a bounded buffer asks hasBufferedInput() whether to
  // come back without a new socket read.
  Pair p(serverContext(), clientContext());
  ASSERT_TRUE(p.handshake());
  EXPECT_FALSE(p.server.hasBufferedInput());
  ASSERT_EQ(p.client.writePlain("first-record", 12), 12);
  ASSERT_EQ(p.client.writePlain("second-record", 13), 13);
  ASSERT_TRUE(pump(p.client, p.server));
  char buf[5];
  ASSERT_EQ(p.server.readPlain(buf, sizeof buf), 5);
  EXPECT_EQ(std::string(buf, 5), "first");
  EXPECT_TRUE(p.server.hasBufferedInput());  // the rest of the first record is decrypted
  std::string rest;
  while (p.server.hasBufferedInput()) {
    const ptrdiff_t n = p.server.readPlain(buf, sizeof buf);
    ASSERT_GT(n, 0) << "hasBufferedInput() was true but readPlain() gave nothing";
    rest.append(buf, static_cast<size_t>(n));
  }
  // The second record was fed too: a reader that stops when hasBufferedInput() turns false must
  // not leave it behind.
  EXPECT_EQ(rest, "-recordsecond-record");
  EXPECT_EQ(readAll(p.server), "");
}

TEST(TlsChannelTest, WritePlainTakesNothingBeforeTheHandshake) {
  Pair p(serverContext(), clientContext());
  EXPECT_EQ(p.client.writePlain("PING\r\n", 6), 0);
  EXPECT_EQ(p.server.writePlain("+OK\r\n", 5), 0);
  ASSERT_TRUE(p.client.startHandshake());
  EXPECT_EQ(p.client.writePlain("PING\r\n", 6), 0);  // ClientHello sent, not yet done
  char buf[16];
  EXPECT_EQ(p.server.readPlain(buf, sizeof buf), 0);
  ASSERT_TRUE(pump(p.client, p.server));
  EXPECT_EQ(p.client.writePlain("PING\r\n", 6), 6);
}

TEST(TlsChannelTest, TheContextOutlivesItsLastOtherOwner) {
  // A reload drops the old context; channels made with it carry on.
  auto server_ctx = serverContext();
  auto client_ctx = clientContext();
  Pair p(server_ctx, client_ctx);
  server_ctx.reset();
  client_ctx.reset();
  ASSERT_TRUE(p.handshake());
  EXPECT_EQ(roundTrip(p.client, p.server, p.client, p.server, "hello"), "hello");
}

TEST(TlsChannelTest, AnUnknownCaFailsVerification) {
  ClientSettings s;
  s.ca_cert_file = testCerts().otherCaCert();
  Pair p(serverContext(), clientContext(s));
  EXPECT_FALSE(p.handshake());
  EXPECT_FALSE(p.client.handshakeDone());
  EXPECT_TRUE(contains(p.client.error(), "verif")) << p.client.error();
  EXPECT_TRUE(contains(p.client.error(), "unable to get local issuer certificate"))
      << p.client.error();
  EXPECT_FALSE(p.client.peerVerified());
  // The client's alert reaches the server, which fails too rather than hanging on.
  std::vector<char> alert(p.client.pendingCipher());
  if (!alert.empty()) {
    alert.resize(p.client.takeCipher(alert.data(), alert.size()));
    EXPECT_FALSE(p.server.feed(alert.data(), alert.size()));
    EXPECT_NE(p.server.error(), "");
  }
}

TEST(TlsChannelTest, AServerFromAnotherCaFailsVerification) {
  ServerSettings s;
  s.cert_file = testCerts().otherServerCert();
  s.key_file = testCerts().otherServerKey();
  Pair p(serverContext(s), clientContext());
  EXPECT_FALSE(p.handshake());
  EXPECT_TRUE(contains(p.client.error(), "verif")) << p.client.error();
}

TEST(TlsChannelTest, AWrongServerNameFailsVerification) {
  ClientSettings s;
  s.server_name = "wrong.example";
  Pair p(serverContext(), clientContext(s));
  EXPECT_FALSE(p.handshake());
  EXPECT_TRUE(contains(p.client.error(), "verif")) << p.client.error();
  EXPECT_TRUE(contains(p.client.error(), "hostname mismatch")) << p.client.error();
}

TEST(TlsChannelTest, AWrongHostFailsVerification) {
  Pair p(serverContext(), clientContext(), "shard7.internal");
  EXPECT_FALSE(p.handshake());
  EXPECT_TRUE(contains(p.client.error(), "hostname mismatch")) << p.client.error();
}

TEST(TlsChannelTest, TheServerNameOverridesTheHost) {
  ClientSettings s;
  s.server_name = "localhost";
  Pair p(serverContext(), clientContext(s), "shard7.internal");
  EXPECT_TRUE(p.handshake()) << p.client.error();
  EXPECT_TRUE(p.client.peerVerified());
}

TEST(TlsChannelTest, NoVerificationAcceptsAnyCertificate) {
  ClientSettings s;
  s.ca_cert_file = testCerts().otherCaCert();
  s.server_name = "wrong.example";
  s.verify = false;
  Pair p(serverContext(), clientContext(s));
  ASSERT_TRUE(p.handshake()) << p.client.error();
  EXPECT_FALSE(p.client.peerVerified());
  EXPECT_EQ(roundTrip(p.client, p.server, p.client, p.server, "x"), "x");
  EXPECT_EQ(roundTrip(p.server, p.client, p.client, p.server, "y"), "y");
}

TEST(TlsChannelTest, AnIpAddressIsVerifiedAgainstTheIpSan) {
  Pair p(serverContext(), clientContext(), "127.0.0.1");
  ASSERT_TRUE(p.handshake()) << p.client.error();
  EXPECT_TRUE(p.client.peerVerified());

  Pair other(serverContext(), clientContext(), "127.0.0.2");
  EXPECT_FALSE(other.handshake());
  EXPECT_TRUE(contains(other.client.error(), "IP address mismatch")) << other.client.error();

  ClientSettings by_name;
  by_name.server_name = "127.0.0.1";
  Pair named(serverContext(), clientContext(by_name), "shard7.internal");
  EXPECT_TRUE(named.handshake()) << named.client.error();
}

TEST(TlsChannelTest, RequiredClientCertificateMissing) {
  Pair p(serverContext(askingClients(AuthClients::kYes)), clientContext());
  EXPECT_FALSE(p.handshake());
  EXPECT_FALSE(p.server.handshakeDone());
  EXPECT_TRUE(contains(p.server.error(), "certificate")) << p.server.error();
  // In TLS 1.3 the client finishes first and learns of the refusal from the server's alert.
  std::string alert(p.server.pendingCipher(), '\0');
  alert.resize(p.server.takeCipher(alert.data(), alert.size()));
  ASSERT_FALSE(alert.empty());
  if (p.client.feed(alert.data(), alert.size())) {
    bool failed = false;
    EXPECT_EQ(readAll(p.client, 1024, &failed), "");
    EXPECT_TRUE(failed);
  }
  EXPECT_TRUE(contains(p.client.error(), "certificate")) << p.client.error();
}

TEST(TlsChannelTest, RequiredClientCertificateMissingOverTls12) {
  ServerSettings s = askingClients(AuthClients::kYes);
  s.protocols = "TLSv1.2";
  Pair p(serverContext(s), clientContext());
  EXPECT_FALSE(p.handshake());
  EXPECT_FALSE(p.server.handshakeDone());
  EXPECT_FALSE(p.client.handshakeDone());
  EXPECT_TRUE(contains(p.server.error(), "certificate")) << p.server.error();
}

TEST(TlsChannelTest, RequiredClientCertificatePresent) {
  Pair p(serverContext(askingClients(AuthClients::kYes)), clientContext(withClientCert()));
  ASSERT_TRUE(p.handshake()) << p.client.error() << " / " << p.server.error();
  EXPECT_TRUE(p.server.peerVerified());
  EXPECT_TRUE(p.client.peerVerified());
  EXPECT_EQ(roundTrip(p.client, p.server, p.client, p.server, "PING"), "PING");
}

TEST(TlsChannelTest, AClientCertificateFromAnotherCaIsRefused) {
  ClientSettings s;
  s.cert_file = testCerts().otherServerCert();
  s.key_file = testCerts().otherServerKey();
  Pair p(serverContext(askingClients(AuthClients::kOptional)), clientContext(s));
  EXPECT_FALSE(p.handshake());
  EXPECT_FALSE(p.server.handshakeDone());
  EXPECT_TRUE(contains(p.server.error(), "verif")) << p.server.error();
}

TEST(TlsChannelTest, OptionalClientCertificate) {
  Pair without(serverContext(askingClients(AuthClients::kOptional)), clientContext());
  ASSERT_TRUE(without.handshake()) << without.server.error();
  EXPECT_FALSE(without.server.peerVerified());
  EXPECT_EQ(roundTrip(without.client, without.server, without.client, without.server, "a"), "a");

  Pair with(serverContext(askingClients(AuthClients::kOptional)), clientContext(withClientCert()));
  ASSERT_TRUE(with.handshake()) << with.server.error();
  EXPECT_TRUE(with.server.peerVerified());
}

TEST(TlsChannelTest, ProtocolsAreNegotiatedWithinBothRanges) {
  ServerSettings s;
  s.protocols = "TLSv1.2 TLSv1.3";
  ClientSettings c;
  c.protocols = "TLSv1.2";
  Pair p(serverContext(s), clientContext(c));
  ASSERT_TRUE(p.handshake()) << p.client.error();
  EXPECT_EQ(p.client.protocol(), "TLSv1.2");
  EXPECT_EQ(p.server.protocol(), "TLSv1.2");
  EXPECT_EQ(roundTrip(p.client, p.server, p.client, p.server, "over 1.2"), "over 1.2");

  ServerSettings only13;
  only13.protocols = "TLSv1.3";
  Pair none(serverContext(only13), clientContext(c));
  EXPECT_FALSE(none.handshake());
  EXPECT_NE(none.server.error() + none.client.error(), "");
}

TEST(TlsChannelTest, PlaintextInsteadOfAClientHelloFailsCleanly) {
  TlsChannel server(serverContext());
  EXPECT_FALSE(server.feed("PING\r\n", 6));
  EXPECT_FALSE(server.handshakeDone());
  EXPECT_TRUE(contains(server.error(), "TLS handshake failed")) << server.error();
  char buf[64];
  EXPECT_EQ(server.readPlain(buf, sizeof buf), 0);
  EXPECT_EQ(server.writePlain("x", 1), 0);
  // Drain whatever alert it produced; nothing else happens.
  while (server.pendingCipher() > 0) {
    server.takeCipher(buf, sizeof buf);
  }

  // A whole inline command, and an HTTP request, the same.
  TlsChannel again(serverContext());
  const std::string inline_cmd = "*1\r\n$4\r\nPING\r\n";
  EXPECT_FALSE(again.feed(inline_cmd.data(), inline_cmd.size()));
  EXPECT_NE(again.error(), "");
  TlsChannel http(serverContext());
  const std::string get = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  EXPECT_FALSE(http.feed(get.data(), get.size()));
  EXPECT_NE(http.error(), "");
}

TEST(TlsChannelTest, GarbageAfterTheHandshakeFailsTheRead) {
  Pair p(serverContext(), clientContext());
  ASSERT_TRUE(p.handshake());
  const std::string junk(64, 'Z');
  EXPECT_TRUE(p.server.feed(junk.data(), junk.size()));  // fed, not yet decrypted
  char buf[64];
  EXPECT_EQ(p.server.readPlain(buf, sizeof buf), -1);
  EXPECT_NE(p.server.error(), "");
}

// A peer driven through the OpenSSL API directly, to send what TlsChannel has no call for.
struct RawPeer {
  SSL* ssl;
  BIO* in = BIO_new(BIO_s_mem());
  BIO* out = BIO_new(BIO_s_mem());
  explicit RawPeer(const TlsContext& ctx, bool client) : ssl(SSL_new(ctx.native())) {
    BIO_set_mem_eof_return(in, -1);
    SSL_set_bio(ssl, in, out);
    if (client) {
      SSL_set_connect_state(ssl);
    } else {
      SSL_set_accept_state(ssl);
    }
  }
  ~RawPeer() { SSL_free(ssl); }

  std::string take() {
    std::string bytes(BIO_ctrl_pending(out), '\0');
    bytes.resize(static_cast<size_t>(std::max(0, BIO_read(out, bytes.data(), bytes.size()))));
    return bytes;
  }
  void give(const std::string& bytes) { BIO_write(in, bytes.data(), bytes.size()); }
};

std::string takeAll(TlsChannel& ch) {
  std::string bytes(ch.pendingCipher(), '\0');
  bytes.resize(ch.takeCipher(bytes.data(), bytes.size()));
  return bytes;
}

TEST(TlsChannelTest, ThePeersCloseNotifyIsSeen) {
  auto client_ctx = clientContext();
  RawPeer peer(*client_ctx, /*client=*/true);
  TlsChannel server(serverContext());
  int rc = 0;
  for (int i = 0; i < 10 && (rc = SSL_do_handshake(peer.ssl)) != 1; ++i) {
    const std::string hello = peer.take();
    ASSERT_TRUE(server.feed(hello.data(), hello.size())) << server.error();
    peer.give(takeAll(server));
  }
  ASSERT_EQ(rc, 1);
  const std::string rest = peer.take();  // the client's Finished
  ASSERT_TRUE(server.feed(rest.data(), rest.size())) << server.error();
  ASSERT_TRUE(server.handshakeDone());
  ASSERT_EQ(SSL_write(peer.ssl, "last", 4), 4);
  SSL_shutdown(peer.ssl);
  const std::string tail = peer.take();
  ASSERT_TRUE(server.feed(tail.data(), tail.size())) << server.error();
  EXPECT_FALSE(server.peerClosed());
  char buf[64];
  EXPECT_EQ(server.readPlain(buf, sizeof buf), 4);
  EXPECT_EQ(std::string(buf, 4), "last");
  EXPECT_EQ(server.readPlain(buf, sizeof buf), 0);
  EXPECT_TRUE(server.peerClosed());
  EXPECT_EQ(server.error(), "");
  EXPECT_FALSE(server.hasBufferedInput());
  EXPECT_EQ(server.readPlain(buf, sizeof buf), 0);
}

TEST(TlsChannelTest, TheServersCloseNotifyIsSeenByTheClient) {
  auto server_ctx = serverContext();
  RawPeer peer(*server_ctx, /*client=*/false);
  TlsChannel client(clientContext(), "localhost");
  ASSERT_TRUE(client.startHandshake());
  for (int i = 0; i < 10 && !client.handshakeDone(); ++i) {
    peer.give(takeAll(client));
    SSL_do_handshake(peer.ssl);
    const std::string reply = peer.take();
    ASSERT_TRUE(client.feed(reply.data(), reply.size())) << client.error();
  }
  ASSERT_TRUE(client.handshakeDone());
  peer.give(takeAll(client));
  ASSERT_EQ(SSL_do_handshake(peer.ssl), 1);
  SSL_shutdown(peer.ssl);
  const std::string tail = peer.take();  // session tickets, then close_notify
  ASSERT_TRUE(client.feed(tail.data(), tail.size())) << client.error();
  char buf[64];
  EXPECT_EQ(client.readPlain(buf, sizeof buf), 0);
  EXPECT_TRUE(client.peerClosed());
  EXPECT_EQ(client.error(), "");
}

// Every worker shares the contexts, so their certificates are read by several threads at once.
// Fresh contexts, then handshakes in parallel threads (client certificates too, so both stores and
// both own certificates are used): each must verify, and the ThreadSanitizer build must stay
// silent about the certificates' cached extensions.
TEST(TlsChannelTest, ThreadsShareFreshContexts) {
  auto server_ctx = serverContext(askingClients(AuthClients::kYes));
  auto client_ctx = clientContext(withClientCert());
  ASSERT_NE(server_ctx, nullptr);
  ASSERT_NE(client_ctx, nullptr);
  constexpr int kThreads = 4;
  constexpr int kHandshakes = 3;
  std::atomic<int> ready{0};
  std::atomic<int> verified{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      ready.fetch_add(1);
      while (ready.load() < kThreads) {
        std::this_thread::yield();
      }
      for (int i = 0; i < kHandshakes; ++i) {
        Pair p(server_ctx, client_ctx);
        if (p.handshake() && p.client.peerVerified() && p.server.peerVerified()) {
          verified.fetch_add(1);
        }
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  EXPECT_EQ(verified.load(), kThreads * kHandshakes);
}

}  // namespace
}  // namespace sp::tls
