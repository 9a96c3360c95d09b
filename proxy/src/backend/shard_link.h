// ShardLink: the connection core both shard connection kinds share (twemproxy's one connection
// struct with per-role hooks). It owns the socket (TCP or Unix), the TLS session under
// backend.tls, the output, in-flight and input buffers and the reply scanner, and runs the loops
// that are the same for every shard connection: connect, the step once connected, the TLS
// handshake, writes (what the socket takes at once, the rest in one uv_write), reads framed into
// complete replies, and the close. What a connection does with each step is its role's
// (ShardLink::Role): BackendConn pipelines many clients' requests with health PINGs and
// reconnects; DedicatedConn serves one session and is discarded when it fails.
//
//            connect()              connected (and, with backend.tls, handshake done)
//   kClosed ──────────► kConnecting ──────────────────────────────────────────────► kUp
//      ▲                     │  Role::onLinkHandshaking while the TLS handshake runs   │
//      └──── close() ◄───────┴──── Role::onLinkFailed (refused, EOF, protocol error) ◄─┘
//
// The link never decides on its own to close: every failure goes to Role::onLinkFailed, and the
// role closes it (at once or after answering its requests). A closed link may connect again once
// its socket's close has completed (closing() false); the role's onLinkClosed says when.
#pragma once

#include <uv.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "backend/stream_socket.h"
#include "core/buffer.h"
#include "net/ring_loop.h"
#include "net/send_batch.h"
#include "resp/reply_scanner.h"
#include "route/topology.h"
#include "tls/tls_channel.h"

namespace sp::net {
class Worker;
}

namespace sp::backend {

class ShardLink final : public net::RingLoop::Reader, private net::SendBatch::Sender {
 public:
  enum class State : uint8_t { kClosed, kConnecting, kUp };
  // Whether a failure counts as a failed connect (the shard's connect_failures) or not.
  enum class Failure : uint8_t { kConnect, kLink };

  // What a connection kind does at each step of its link. Every hook runs on the worker's loop;
  // a hook may close the link (the link then does nothing more in that callback).
  class Role {
   public:
    // Connected under backend.tls: the handshake has begun and its first records wait to go out
    // (flush the link); the link is still connecting until it is done.
    virtual void onLinkHandshaking() = 0;
    // Connected, and under backend.tls the handshake done: the link is up. Flush it when
    // hasPending(): the handshake's last records may wait (TLS 1.3's Finished), with or without
    // commands queued while connecting.
    virtual void onLinkUp() = 0;
    // `nread` > 0 bytes arrived; called before the replies they complete are handed over.
    virtual void onLinkRead(size_t nread) = 0;
    // One complete reply, in the order the shard sent it. The view is valid during the call.
    virtual void onLinkReply(std::string_view reply) = 0;
    // A write that flush() queued (Flushed::kQueued) has completed.
    virtual void onLinkWritten() = 0;
    // A write that flush() handed over whole (Flushed::kDone) to go out with the worker's ring
    // found the socket full: the rest is queued as for kQueued, and onLinkWritten follows.
    virtual void onLinkBackedUp() = 0;
    // TLS records (handshake, alerts, renegotiation) wait to go out: flush the link.
    virtual void onLinkFlushWanted() = 0;
    // The link failed: connect refused or timed out in the kernel, read or write error, EOF, a
    // protocol error, a TLS failure. The role closes it.
    virtual void onLinkFailed(std::string_view reason, Failure kind) = 0;
    // The socket's close (close()) has completed; the link may connect again, or be destroyed.
    virtual void onLinkClosed() = 0;

   protected:
    ~Role() = default;
  };

  // `min_read_space`: the input buffer's free space before each read. `keep_bytes`: a buffer that
  // grew past it gives its memory back as soon as it is empty; 0: buffers keep their memory until
  // trim().
  ShardLink(net::Worker& worker, Role& role, size_t min_read_space, size_t keep_bytes);
  ~ShardLink();
  ShardLink(const ShardLink&) = delete;
  ShardLink& operator=(const ShardLink&) = delete;

  // Starts connecting to `address`: a fresh socket and, under backend.tls, a fresh TLS session.
  // False when the attempt cannot start (the host does not resolve, no socket): the role has been
  // told (onLinkFailed) then. Requires a closed link whose socket has finished closing.
  bool connect(const route::ShardAddress& address);

  // Hands what out() holds to the socket: sealed into records under TLS (before the handshake is
  // done, only the handshake's own records go), as much as the socket takes at once, the rest in
  // one uv_write. kQueued: that write is in flight and onLinkWritten will follow; kFailed: the
  // role has been told. A plain link read through the worker's ring sends through it too: the
  // bytes are queued there (kDone) and go with the round's shard writes (FlushBatch), and if the
  // socket could not take them all, the role hears onLinkBackedUp at the next turn, or
  // onLinkFailed.
  enum class Flushed : uint8_t { kNothing, kDone, kQueued, kFailed };
  Flushed flush();

  // Stops reading and closes the socket (onLinkClosed follows); what was read and not yet framed
  // is dropped, and what out() holds too unless `keep_out`. A write in flight is cancelled.
  void close(bool keep_out);

  // A reply the role cannot place (one that answers no request): counted, and the link fails.
  void protocolError(std::string_view what);

  // Gives back the memory of buffers that grew past `keep` for a large value and carried no more
  // than half of it since the last trim; returns the bytes given back. Between loop turns only.
  size_t trim(size_t keep);

  State state() const { return state_; }
  bool up() const { return state_ == State::kUp; }
  bool connecting() const { return state_ == State::kConnecting; }
  // The socket's close has been issued and has not completed.
  bool closing() const { return closing_; }
  bool writing() const { return writing_; }
  // Bytes waiting to go out: in out(), or TLS records.
  bool hasPending() const {
    return !out_.empty() || (tls_ != nullptr && tls_->pendingCipher() > 0);
  }
  bool handshakeStarted() const { return tls_ != nullptr && tls_->handshakeStarted(); }
  // Bytes libuv still holds for the write in flight, and the kernel's send queue (StallWatch).
  size_t writeQueue() const;
  size_t kernelQueue() const;
  // The bytes not yet handed to the socket; roles append commands here.
  Buffer& out() { return out_; }
  const Buffer& out() const { return out_; }

 private:
  static void onConnectCb(uv_connect_t* req, int status);
  static void onAllocCb(uv_handle_t* handle, size_t suggested, uv_buf_t* buf);
  static void onReadCb(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf);
  static void onWriteCb(uv_write_t* req, int status);
  static void onCloseCb(uv_handle_t* handle);

  void onConnected(int status);
  void onRead(ssize_t nread);
  // Plain links read through the worker's ring when it has one (net::RingLoop).
  void onRingData(const char* data, size_t size) override;
  void onRingEnd(int error) override;
  // The ring's send of write_buf_ (net::SendBatch::Sender).
  void sent(ssize_t result) override;
  // A write of write_buf_ has ended (gone whole, failed or cancelled): the buffer is free.
  void endWrite();
  void frameReplies(size_t nread);  // after `nread` bytes reached in_: hands complete replies over
  // Hands the complete replies at the front of `data` to the role; *used: their bytes. False
  // once the link failed or closed meanwhile.
  bool frame(std::string_view data, size_t* used);
  // Copies ring bytes into in_; false (the link failed) when the memory cannot be had.
  bool keep(std::string_view bytes);
  // backend.tls: ciphertext read into the worker's buffer, decrypted into in_; false once the
  // link failed or there is nothing to frame.
  bool decryptTls(size_t nread);
  void goUp();  // the link is up: tell the role

  net::Worker& worker_;
  Role& role_;
  const size_t min_read_space_;
  const size_t keep_bytes_;
  State state_ = State::kClosed;  // the socket is open in every state but kClosed
  bool closing_ = false;          // uv_close issued, its callback not yet run
  bool writing_ = false;          // a write of write_buf_ is in flight (uv_write or the ring's)
  StreamSocket socket_{};
  net::RingLoop::Slot ring_slot_ = net::RingLoop::kNoSlot;
  uv_connect_t connect_req_{};
  uv_write_t write_req_{};
  Buffer out_;                            // bytes not yet handed to the kernel
  Buffer write_buf_;                      // bytes of the write in flight
  Buffer in_;                             // replies received, not yet complete
  std::unique_ptr<tls::TlsChannel> tls_;  // backend.tls: this connection's TLS session
  Buffer tls_wire_;                       // records sealed in flush(), on their way out
  resp::ReplyScanner scanner_;
  // The most bytes out_ held at a flush, and in_ after a read, since the last trim().
  size_t out_peak_ = 0;
  size_t in_peak_ = 0;
};

}  // namespace sp::backend
