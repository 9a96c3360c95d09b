// The shard connection core: connect, write, read and frame, close; each step's outcome to the
// role.
#include "backend/shard_link.h"

#include <algorithm>
#include <cstring>

#include "backend/send_queue.h"
#include "core/assert.h"
#include "net/worker.h"
#include "resp/errors.h"

namespace sp::backend {

ShardLink::ShardLink(net::Worker& worker, Role& role, size_t min_read_space, size_t keep_bytes)
    : worker_(worker), role_(role), min_read_space_(min_read_space), keep_bytes_(keep_bytes) {}

ShardLink::~ShardLink() { SP_ASSERT(state_ == State::kClosed && !closing_); }

bool ShardLink::connect(const route::ShardAddress& address) {
  SP_ASSERT(state_ == State::kClosed && !closing_);
  initStreamSocket(worker_.loop(), address, &socket_, this);
  tls_ = makeTlsChannel(worker_.context().backendTls(), address);
  state_ = State::kConnecting;  // the socket is open from here until close()
  connect_req_.data = this;
  if (Status started =
          connectStreamSocket(address, &socket_, &connect_req_, &ShardLink::onConnectCb);
      !started.ok()) {
    role_.onLinkFailed(started.message(), Failure::kLink);
    return false;
  }
  return true;
}

void ShardLink::onConnectCb(uv_connect_t* req, int status) {
  if (status == UV_ECANCELED) {
    return;  // closed while connecting
  }
  static_cast<ShardLink*>(req->data)->onConnected(status);
}

void ShardLink::onConnected(int status) {
  if (state_ != State::kConnecting) {
    return;
  }
  if (status < 0) {
    role_.onLinkFailed(uv_strerror(status), Failure::kConnect);
    return;
  }
  if (socket_.handle.type == UV_TCP) {
    uv_tcp_nodelay(&socket_.tcp, 1);
    worker_.setKeepAlive(&socket_.tcp);
  }
  net::RingLoop& ring = worker_.ringReads();
  if (tls_ == nullptr && ring.active()) {
    uv_os_fd_t fd = -1;
    uv_fileno(&socket_.handle, &fd);
    ring_slot_ = ring.add(fd, this, net::RingLoop::Source::kShard);
  } else {
    uv_read_start(&socket_.stream, &ShardLink::onAllocCb, &ShardLink::onReadCb);
  }
  if (tls_ == nullptr) {
    goUp();
  } else if (tls_->startHandshake()) {
    role_.onLinkHandshaking();
  } else {
    role_.onLinkFailed(tls_->error(), Failure::kConnect);
  }
}

void ShardLink::goUp() {
  state_ = State::kUp;
  role_.onLinkUp();
}

ShardLink::Flushed ShardLink::flush() {
  if (writing_) {
    return Flushed::kNothing;  // onLinkWritten follows; the role flushes again then
  }
  Buffer* wire = &out_;
  if (tls_ == nullptr) {
    if (state_ != State::kUp || out_.empty()) {
      return Flushed::kNothing;
    }
    out_peak_ = std::max(out_peak_, out_.size());
  } else {
    // The handshake's records go out while the link is still connecting.
    const bool records = tls_->pendingCipher() > 0;
    if ((state_ != State::kUp && !(state_ == State::kConnecting && records)) ||
        (out_.empty() && !records)) {
      return Flushed::kNothing;
    }
    out_peak_ = std::max(out_peak_, out_.size());
    if (Status sealed = sealTlsRecords(*tls_, out_, tls_wire_); !sealed.ok()) {
      role_.onLinkFailed(sealed.message(), Failure::kLink);
      return Flushed::kFailed;
    }
    if (tls_wire_.empty()) {
      return Flushed::kNothing;
    }
    wire = &tls_wire_;
  }
  SP_ASSERT(write_buf_.empty());
  net::SendBatch& sends = worker_.flushes().sends();
  if (ring_slot_ != net::RingLoop::kNoSlot && sends.sendsWithLoop()) {
    // Read through the ring (so plain): the bytes are queued there and go out with the round's
    // other shard writes, in one system call for them all; sent() hears how it went.
    write_buf_.swap(out_);
    writing_ = true;
    uv_os_fd_t fd = -1;
    uv_fileno(&socket_.handle, &fd);
    sends.queue(fd, write_buf_.readPtr(), write_buf_.size(), this);
    return Flushed::kDone;
  }
  write_req_.data = this;
  int error = 0;
  switch (writeOrQueue(&socket_, *wire, write_buf_, &write_req_, &ShardLink::onWriteCb, &error)) {
    case WriteStep::kDone:
      if (keep_bytes_ != 0) {
        wire->shrinkIfEmpty(keep_bytes_);  // a large command has gone: its memory goes too
      }
      return Flushed::kDone;
    case WriteStep::kFailed:
      role_.onLinkFailed(uv_strerror(error), Failure::kLink);
      return Flushed::kFailed;
    case WriteStep::kQueued:
      break;
  }
  writing_ = true;
  return Flushed::kQueued;
}

void ShardLink::sent(ssize_t result) {
  if (result == static_cast<ssize_t>(write_buf_.size())) {
    endWrite();
    if (hasPending()) {
      role_.onLinkFlushWanted();  // commands queued while the bytes waited for the wait
    }
    return;
  }
  // -errno is libuv's code on Unix; -EAGAIN is UV_EAGAIN.
  const int error = static_cast<int>(std::max<ssize_t>(result, INT32_MIN));
  if (result < 0 && error != UV_EAGAIN) {
    endWrite();
    role_.onLinkFailed(uv_strerror(error), Failure::kLink);
    return;
  }
  if (result > 0) {
    write_buf_.consume(static_cast<size_t>(result));
  }
  // The socket is full: the rest goes as flush()'s uv_write would have sent it.
  uv_buf_t buf = uv_buf_init(const_cast<char*>(write_buf_.readPtr()),
                             static_cast<unsigned>(write_buf_.size()));
  write_req_.data = this;
  if (const int rc = uv_write(&write_req_, &socket_.stream, &buf, 1, &ShardLink::onWriteCb);
      rc != 0) {
    endWrite();
    role_.onLinkFailed(uv_strerror(rc), Failure::kLink);
    return;
  }
  role_.onLinkBackedUp();
}

void ShardLink::endWrite() {
  writing_ = false;
  write_buf_.clear();
  if (keep_bytes_ != 0) {
    write_buf_.shrinkIfEmpty(keep_bytes_);
  }
}

void ShardLink::onWriteCb(uv_write_t* req, int status) {
  auto* self = static_cast<ShardLink*>(req->data);
  self->endWrite();
  if (status < 0) {
    // Cancelled: closed with the write in flight. A write that failed before a close in the same
    // loop turn is reported only once, by whatever closed the link.
    if (status != UV_ECANCELED && self->state_ != State::kClosed) {
      self->role_.onLinkFailed(uv_strerror(status), Failure::kLink);
    }
    return;
  }
  self->role_.onLinkWritten();
}

size_t ShardLink::writeQueue() const {
  return writing_ ? uv_stream_get_write_queue_size(&socket_.stream) : 0;
}

size_t ShardLink::kernelQueue() const { return kernelSendQueue(&socket_.handle); }

void ShardLink::onAllocCb(uv_handle_t* handle, size_t /*suggested*/, uv_buf_t* buf) {
  auto* self = static_cast<ShardLink*>(handle->data);
  net::Worker& w = self->worker_;
  *buf = readSpace(self->tls_ != nullptr,
                   uv_buf_init(w.readBuffer(), static_cast<unsigned>(w.readBufferSize())),
                   self->in_, self->min_read_space_);
}

void ShardLink::onReadCb(uv_stream_t* stream, ssize_t nread, const uv_buf_t* /*buf*/) {
  static_cast<ShardLink*>(stream->data)->onRead(nread);
}

void ShardLink::onRead(ssize_t nread) {
  if (nread < 0) {
    role_.onLinkFailed(readFailure(nread), Failure::kLink);
    return;
  }
  if (nread == 0) {
    return;  // libuv's EAGAIN: nothing arrived
  }
  if (tls_ == nullptr) {
    in_.commit(static_cast<size_t>(nread));
  } else if (!decryptTls(static_cast<size_t>(nread))) {
    return;
  }
  frameReplies(static_cast<size_t>(nread));
}

void ShardLink::onRingData(const char* data, size_t size) {
  if (state_ != State::kUp) {
    return;  // closed; the ring's remove() is on its way
  }
  if (!in_.empty()) {
    if (keep(std::string_view(data, size))) {  // the rest of a reply begun in an earlier read
      frameReplies(size);
    }
    return;
  }
  // Replies are framed straight from the ring's buffer; only an incomplete last one is kept.
  role_.onLinkRead(size);
  const std::string_view view(data, size);
  size_t used = 0;
  if (frame(view, &used) && used < size && keep(view.substr(used))) {
    in_peak_ = std::max(in_peak_, in_.size());
  }
}

bool ShardLink::keep(std::string_view bytes) {
  if (!in_.tryEnsureWritable(bytes.size())) {
    onRead(UV_ENOBUFS);  // as when libuv's read finds no memory: the link fails
    return false;
  }
  std::memcpy(in_.writePtr(), bytes.data(), bytes.size());
  in_.commit(bytes.size());
  return true;
}

void ShardLink::onRingEnd(int error) {
  onRead(error == 0 ? UV_EOF : error);  // the link fails; close() removes the slot
}

void ShardLink::frameReplies(size_t nread) {
  in_peak_ = std::max(in_peak_, in_.size());
  role_.onLinkRead(nread);
  size_t used = 0;
  if (!frame(in_.view(), &used)) {
    return;
  }
  in_.consume(used);
  if (keep_bytes_ != 0) {
    in_.shrinkIfEmpty(keep_bytes_);  // after a large reply; smaller ones never reach the limit
  }
}

bool ShardLink::frame(std::string_view data, size_t* used) {
  while (*used < data.size() && state_ == State::kUp) {
    size_t consumed = 0;
    resp::ReplyInfo info;
    const resp::ParseStatus st = scanner_.scan(data.substr(*used), &consumed, &info);
    if (st == resp::ParseStatus::kIncomplete) {
      break;
    }
    if (st == resp::ParseStatus::kError) {
      worker_.stats().protocol_errors_backend.add(scanner_.error());
      role_.onLinkFailed(std::string("protocol error: ") + resp::errorMessage(scanner_.error()),
                         Failure::kLink);
      return false;
    }
    role_.onLinkReply(data.substr(*used, consumed));
    if (state_ != State::kUp) {
      return false;  // the reply closed the link (an AUTH or PING error, a released connection)
    }
    *used += consumed;
  }
  return state_ == State::kUp;
}

bool ShardLink::decryptTls(size_t nread) {
  if (!tls_->feed(worker_.readBuffer(), nread)) {
    if (!writing_) {
      sendTlsAlert(*tls_, &socket_.stream);
    }
    role_.onLinkFailed(tls_->error(),
                       state_ == State::kConnecting ? Failure::kConnect : Failure::kLink);
    return false;
  }
  if (state_ == State::kConnecting) {
    if (!tls_->handshakeDone()) {
      if (tls_->pendingCipher() > 0) {
        role_.onLinkFlushWanted();  // the handshake's next records
      }
      return false;
    }
    goUp();  // the role flushes what waits, the handshake's last records with it
    if (state_ != State::kUp) {
      return false;
    }
  } else if (tls_->pendingCipher() > 0) {
    role_.onLinkFlushWanted();  // records the session itself sends (a key update, an alert)
    if (state_ == State::kClosed) {
      return false;
    }
  }
  if (Status read = readTlsPlaintext(*tls_, in_); !read.ok()) {
    role_.onLinkFailed(read.message(), Failure::kLink);
    return false;
  }
  return true;
}

void ShardLink::protocolError(std::string_view what) {
  worker_.stats().protocol_errors_backend.add();
  role_.onLinkFailed(std::string("protocol error: ") + std::string(what), Failure::kLink);
}

void ShardLink::close(bool keep_out) {
  if (state_ != State::kClosed) {  // the socket is open
    if (in_send_batch) {
      // The ring's send goes to the kernel now, while the socket and the bytes are there.
      worker_.flushes().sends().forget(this);
      endWrite();
    }
    if (ring_slot_ != net::RingLoop::kNoSlot) {
      worker_.ringReads().remove(ring_slot_);  // before uv_close closes the socket
      ring_slot_ = net::RingLoop::kNoSlot;
    } else {
      uv_read_stop(&socket_.stream);
    }
    closing_ = true;
    uv_close(&socket_.handle, &ShardLink::onCloseCb);
  }
  state_ = State::kClosed;
  if (!keep_out) {
    out_.clear();
  }
  in_.clear();
  tls_wire_.clear();
  scanner_.reset();
  // tls_ stays until the next connect: the failure being reported may be its error text.
}

void ShardLink::onCloseCb(uv_handle_t* handle) {
  auto* self = static_cast<ShardLink*>(handle->data);
  self->closing_ = false;
  self->role_.onLinkClosed();  // may destroy the link: nothing after this
}

size_t ShardLink::trim(size_t keep) {
  // Only a buffer that carried little since the last trim: one that keeps carrying large values
  // keeps its memory. Between loop turns nothing points into out_ or in_, so their few bytes left
  // (a PING just queued, part of a reply) may move; write_buf_ is libuv's while a write is in
  // flight.
  size_t freed = 0;
  if (out_peak_ <= keep / 2) {
    freed += out_.shrink(keep) + write_buf_.shrinkIfEmpty(keep);
  }
  if (in_peak_ <= keep / 2) {
    freed += in_.shrink(keep);
  }
  out_peak_ = in_peak_ = 0;
  return freed;
}

}  // namespace sp::backend
