// ClientSession: one client connection on one worker.
//
// The request's journey and the ordering invariant:
//
//   socket ──read──▶ RequestParser ──frame──▶ dispatch ──┬─ local command: reply now
//                                                        ├─ refused (unknown, CROSSSLOT, ...)
//                                                        └─ routed: BackendConn::send(shard)
//   every request gets a PendingRequest at the back of this session's FIFO;
//   a backend reply completes its PendingRequest (a split one once all fragments are in);
//   the completed prefix of the FIFO is moved to the output buffer, flushed in the check phase.
//
// So replies leave in request order whatever order shards answer in: a reply that completes
// behind an unfinished request waits in its PendingRequest. Reading pauses while the FIFO holds
// limits.max_inflight_per_client requests or while unsent output is large; a client whose unsent
// output passes limits.client_output_buffer is closed. An idle session holds no buffer.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <uv.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/buffer.h"
#include "core/clock.h"
#include "core/intrusive_queue.h"
#include "net/flush_batch.h"
#include "net/send_batch.h"
#include "net/worker_stats.h"
#include "resp/errors.h"
#include "resp/protocol.h"
#include "resp/request_parser.h"
#include "resp/resp3.h"
#include "session/pending_request.h"
#include "session/session_state.h"
#include "tls/tls_channel.h"

namespace sp::net {
class Worker;
}

namespace sp::session {

class ClientSession final : public net::Flushable,
                            public net::SendBatch::Sender,
                            public net::RingLoop::Reader {
 public:
  ClientSession(net::Worker& worker, uint64_t id);
  ClientSession(const ClientSession&) = delete;
  ClientSession& operator=(const ClientSession&) = delete;

  uv_tcp_t* handle() { return &tcp_; }
  bool isUnixSocket() const { return unix_socket_; }  // accepted on listen.unix
  // The client's TCP address (AF_INET or AF_INET6) into *out, from getpeername asked once per
  // connection: the slow log names it for every slow request, and a loaded proxy, where every
  // request may be slow, must not pay a system call per request for it. False on a Unix socket
  // or when the socket has no peer (any more).
  bool peerName(sockaddr_storage* out);
  // The client's address as redis-server shows it ("ip:port"; for a Unix-socket client the
  // listening socket's path, "path:0") into out[size]; returns its length, 0 when unknown.
  // Allocates nothing.
  size_t formatPeer(char* out, size_t size);
  bool isTls() const { return tls_ != nullptr; }  // accepted on tls.listen
  // After accept; unix_socket: from listen.unix; tls: the listener's TLS context for a client of
  // tls.listen (nullptr: plain).
  void start(bool unix_socket, std::shared_ptr<const tls::TlsContext> tls = nullptr);
  void refuseConnection(std::string_view error_line);  // best-effort error line, then close
  // Idempotent; the object deletes itself once closed. `detail` goes to the log only.
  void close(net::CloseReason why, std::string_view detail = {});
  void flush() override;               // the worker's check phase (net::FlushBatch)
  void resume() override;              // the same, after markResume
  void sent(ssize_t result) override;  // flush()'s write, sent with the round's (SendBatch)
  // A plain client's reads through the worker's ring (net::RingLoop).
  void onRingData(const char* data, size_t size) override;
  void onRingEnd(int error) override;
  bool idle() const { return fifo_.empty() && pendingOutput() == 0; }
  // limits.timeout: milliseconds (loop time) since the client last sent or was sent a byte; 0
  // while it may not time out, as in redis-server: a request in flight (a blocking command
  // included), output still to write, or subscribed.
  uint64_t idleMs(uint64_t now_ms) const;
  uint64_t lastActiveMs() const { return last_active_ms_; }  // CLIENT LIST idle=

  uint64_t id() const { return id_; }
  // RESP2 until HELLO 3; HELLO 2 and RESET switch back (SessionState).
  resp::Protocol protocol() const { return protocol_; }
  void setProtocol(resp::Protocol protocol) { protocol_ = protocol; }
  const std::string& name() const { return name_; }
  void setName(std::string_view name) { name_ = std::string(name); }
  // The parser's limits from the next request on (AuthGate: lower until AUTH succeeds).
  void setRequestLimits(const resp::ParserLimits& limits) { parser_ = resp::RequestParser(limits); }
  net::Worker& worker() { return worker_; }
  // Transactions, subscriptions, AUTH, dedicated connections: nullptr for a plain session.
  SessionState* state() { return state_.get(); }
  const SessionState* state() const { return state_.get(); }
  uint64_t createdMicros() const { return created_us_; }
  // CLIENT LIST: the command of the latest request (nullptr: none yet, or unknown), the bytes of
  // an incomplete request held (qbuf) in a buffer of queryBufferCapacity() bytes (none while the
  // client's requests arrive whole: they are parsed in the worker's read buffer), the replies not
  // yet written (omem), and the memory the session holds (tot-mem).
  const resp::CommandInfo* lastCommand() const { return last_cmd_; }
  size_t queryBufferBytes() const { return in_ != nullptr ? in_->size() : 0; }
  size_t queryBufferCapacity() const { return in_ != nullptr ? in_->capacity() : 0; }
  size_t outputBytes() const { return pendingOutput(); }
  size_t memoryBytes() const;

  // For a local command answered later (PROXY RELOAD waits for the main thread): queues a
  // request in this session's FIFO, to be completed on this worker's thread with
  // onBackendReply(worker, request, 0, reply); the command then leaves its reply empty.
  PendingRequest* deferReply(const resp::CommandInfo* cmd);

  // Completion entry for backend replies (and errors standing in for them): the shard
  // connections' reply handler (backend::deliverReply). `request` is one of this layer's
  // PendingRequests; it may be orphaned (its client gone), in which case it is only released once
  // nothing refers to it.
  static void onBackendReply(net::Worker& worker, backend::InFlightRequest* in_flight,
                             uint32_t fragment, std::string_view reply);
  // The shard connections' resend lookup (backend::Resend): what a cluster redirect sends again
  // for fragment `fragment` of `request`; false once its client has gone or nothing was kept.
  static bool resendOf(backend::InFlightRequest* in_flight, uint32_t fragment,
                       backend::Resend* out);

 private:
  ~ClientSession() = default;
  static void onAllocCb(uv_handle_t* handle, size_t suggested, uv_buf_t* buf);
  static void onReadCb(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf);
  static void onWriteCb(uv_write_t* req, int status);
  static void onCloseCb(uv_handle_t* handle);

  void onRead(ssize_t nread, const uv_buf_t* buf);
  void startReads();  // through the ring for a plain client when the worker has one, else libuv
  void stopReads();
  void consumeInput(size_t nread, const uv_buf_t* buf);  // onRead's work; may throw bad_alloc
  // Counts `size` bytes read, then runs `consume`; out of memory there closes this client.
  template <typename Consume>
  void takeInput(size_t size, Consume consume);
  // Bytes not held in in_ (the worker's read buffer, the ring's): parsed where they are, the
  // incomplete rest kept in in_. May throw bad_alloc.
  void consumeView(std::string_view data);
  // The bytes held in in_, parsed; in_ goes back to the pool once empty. May throw bad_alloc.
  void consumeHeld();
  // TLS: where the next bytes go (the alloc callback's choice for a plain read).
  bool plainReadBuffer(uv_buf_t* buf);
  // TLS: ciphertext read into the worker's buffer is fed to the channel, and what it decrypts to
  // goes through consumeInput as a plain read would; may throw bad_alloc.
  void onTlsRead(size_t nread, const uv_buf_t* buf);
  void drainTls();
  // TLS: out_ sealed into records after any handshake records, in a pooled buffer for the socket.
  // Nullptr when there is nothing to send or the session closed.
  Buffer* sealTls();
  size_t processInput(std::string_view data);  // returns bytes consumed
  void dispatch(const resp::RequestFrame& frame, std::string_view raw);
  // A reply the proxy built (RESP2), re-encoded in `shape` for a RESP3 client (resp3.h).
  void replyNow(std::string_view reply, bool close_after = false,
                resp::Resp3Shape shape = resp::Resp3Shape::kPlain);
  // Bytes the client gets just before the reply of `before` (a request in the FIFO), after every
  // reply ahead of it: a pub/sub message read ahead of that request's reply on the same shard
  // connection. Behind everything when `before` is null or no longer queued.
  void replyBefore(PendingRequest* before, std::string_view bytes);
  // An error line ("-ERR ...\r\n"), counted as refused and, when the proxy's own, by its kind.
  void refuse(const resp::err::ErrorReply& error);
  void protocolError();
  void drainCompleted();
  // flush()'s write of writing_ has taken n bytes (or failed: libuv's code): the buffer is
  // released, the client closed, or the rest queued with uv_write.
  void written(int n);
  void appendOutput(std::string_view bytes);
  size_t pendingOutput() const;
  bool mayRead() const;
  void updateReading();
  void releaseRequest(PendingRequest* request);

  net::Worker& worker_;
  uint64_t id_;
  uv_tcp_t tcp_{};
  uv_write_t write_req_{};
  resp::RequestParser parser_;
  Buffer* in_ = nullptr;                  // bytes of an incomplete request (none while idle)
  Buffer* out_ = nullptr;                 // replies not yet handed to the kernel
  Buffer* writing_ = nullptr;             // replies of the uv_write in flight (TLS: their records)
  std::unique_ptr<tls::TlsChannel> tls_;  // clients of tls.listen
  IntrusiveQueue<PendingRequest, &PendingRequest::next> fifo_;
  std::string name_;
  resp::Protocol protocol_ = resp::Protocol::kResp2;
  bool closing_ = false;
  bool unix_socket_ = false;
  bool reading_ = false;
  net::RingLoop::Slot ring_slot_ = net::RingLoop::kNoSlot;  // reads through the worker's ring
  bool input_stopped_ = false;      // QUIT or protocol error: ignore anything after it
  bool close_after_flush_ = false;  // close once the output is written
  // The request at the front of the input waits for the FIFO to empty (SessionState lanes).
  bool deferred_ = false;
  std::unique_ptr<SessionState> state_;
  const uint64_t created_us_ = monoMicros();
  uint64_t last_active_ms_ = 0;                  // loop time of the last read or write (idleMs)
  const resp::CommandInfo* last_cmd_ = nullptr;  // lastCommand()
  union {
    sockaddr_in v4;
    sockaddr_in6 v6;
  } peer_{};  // peerName(): sin_family stays AF_UNSPEC until it is known

  friend class SessionAccess;
  friend class SessionState;
};

}  // namespace sp::session
