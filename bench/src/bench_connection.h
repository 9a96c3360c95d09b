// BenchConnection: one client connection. It keeps a FIFO of the requests in flight (latency
// origin, send time, command, verify data), builds the next requests straight into one output
// buffer from the compiled templates, writes them with one uv_try_write per loop turn (uv_write
// only when the socket is full), and frames replies in place with the project's ReplyScanner;
// replies are never copied into objects. Short-connection mode closes and reconnects every N
// requests; a server that closes the connection is counted and either reconnected or fatal.
//
//   kIdle -> kConnecting -> kTlsHandshake -> kHandshake -> kReady -> kClosing -> kDone
//                 ^          (--tls only)      (AUTH/SELECT,           |
//                 |                             when given)            |
//                 +------ reconnect (-k 0, --max-reconnects) ----------+
//
// Requests are built (and timed) only in kReady, so neither the TCP connect nor the TLS and
// AUTH/SELECT handshakes count in any request's latency. With --tls a TlsChannel sits between the
// buffers and the socket: out_ is encrypted into tls_out_ when flushed, and ciphertext read into
// tls_in_ is decrypted into in_, where replies are framed as on the plain path.
#pragma once

#include <uv.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "key_generator.h"
#include "resp/reply_scanner.h"
#include "rng.h"
#include "tls/tls_channel.h"
#include "verifier.h"

namespace sp::bench {

class BenchThread;

class BenchConnection {
 public:
  BenchConnection(BenchThread* thread, uint32_t local_index, uint32_t slot, uint64_t budget);
  BenchConnection(const BenchConnection&) = delete;
  BenchConnection& operator=(const BenchConnection&) = delete;

  void connect();
  // Sends as many requests as the pipeline, the budget and the pacer allow.
  void fill(uint64_t now);
  // Closes the connection now (the run is ending); in-flight requests are dropped.
  void abort();
  // Called when the run starts draining (--test-time over): close once the FIFO is empty.
  void drain();

  // Connecting or running the TLS handshake: --connect-timeout applies.
  bool connecting() const { return state_ == State::kConnecting || state_ == State::kTlsHandshake; }
  bool tlsHandshaking() const { return state_ == State::kTlsHandshake; }
  uint64_t connectStartNs() const { return connect_start_ns_; }
  bool hasInFlight() const { return count_ > 0; }
  uint64_t oldestSendNs() const { return ring_[head_].sent_ns; }
  bool closed() const { return state_ == State::kDone; }

 private:
  enum class State : uint8_t {
    kIdle,
    kConnecting,
    kTlsHandshake,  // --tls: ClientHello sent, waiting for the server's side
    kHandshake,     // AUTH/SELECT sent, waiting for their replies
    kReady,
    kClosing,
    kDone
  };
  static constexpr uint16_t kHandshake = 0xffff;

  struct InFlight {
    uint64_t start_ns;   // latency origin: intended send time under --rate, else send time
    uint64_t sent_ns;    // when it was built for sending (request timeout)
    uint64_t key_index;  // --verify: index among the keys this connection owns
    uint32_t seq;        // --verify: seq written (SET)
    uint32_t bytes_tx;
    uint16_t command;  // index into the phase's commands, or kHandshake
  };

  // Opens the socket bound to the index-th --source-address; false (the thread failed) when
  // it cannot.
  bool bindSource(size_t index);
  static void onConnect(uv_connect_t* req, int status);
  static void onAlloc(uv_handle_t* handle, size_t suggested, uv_buf_t* buf);
  static void onRead(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf);
  static void onWrite(uv_write_t* req, int status);
  static void onClosed(uv_handle_t* handle);

  void startTls();
  void onTlsReady();  // the TLS handshake is done: AUTH/SELECT, or ready
  void onTlsError();  // the channel failed: during the handshake fatal, later a lost connection
  // --tls without --cert: a hint that the server may want a client certificate, when the way the
  // connection ended fits ("" otherwise). `answered`: a request on it got its reply.
  std::string clientCertHint(bool answered) const;
  // --tls: feeds n bytes of tls_in_, sends what the channel produced and appends the decrypted
  // bytes to in_; false when the connection or run ended.
  bool decrypt(size_t n);
  // --tls: encrypts out_ into tls_out_; false when the connection or run ended.
  bool encrypt();
  void writeWire(std::string& buf);
  void sendHandshake();
  void becomeReady();
  void buildRequest(uint64_t now);
  void flush();
  bool processReplies(uint64_t now);  // false when the connection or run ended
  void onReply(std::string_view reply, const resp::ReplyInfo& info, uint64_t now);
  void onLost(const char* what);
  void afterReplies();
  void closeHandle(State next);
  void resetBuffers();

  BenchThread* thread_;
  uint32_t index_;  // within the thread (pacer)
  uint32_t slot_;   // over all threads (keys, seeds, verify)
  uint64_t budget_;
  uint64_t issued_ = 0;
  uint64_t issued_at_connect_ = 0;
  uint32_t pipeline_;
  uint32_t cycle_pos_ = 0;
  uint32_t handshake_pending_ = 0;
  bool reconnect_after_close_ = false;
  bool final_after_close_ = false;
  State state_ = State::kIdle;
  uint64_t connect_start_ns_ = 0;

  uv_tcp_t tcp_{};
  uv_connect_t connect_req_{};
  uv_write_t write_req_{};
  bool write_busy_ = false;
  std::string out_;      // requests built this turn, not yet handed to the kernel
  std::string writing_;  // bytes owned by an uv_write in progress

  // --tls only (nullptr otherwise: the plain path checks this one pointer). A new channel for
  // every connect.
  std::unique_ptr<tls::TlsChannel> tls_;
  std::string tls_out_;       // ciphertext not yet handed to the kernel
  std::vector<char> tls_in_;  // ciphertext read, fed to the channel at once

  std::vector<char> in_;
  size_t in_len_ = 0;
  resp::ReplyScanner scanner_;

  std::vector<InFlight> ring_;
  size_t head_ = 0;
  size_t count_ = 0;

  std::vector<KeyGenerator> keys_;  // one per phase command
  Rng data_rng_;
  VerifySlot* verify_ = nullptr;
  char header_[Verifier::kMaxHeader];
};

}  // namespace sp::bench
