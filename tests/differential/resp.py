"""RESP for the differential test: encode a request, and read replies off a socket as their exact
bytes, so that the proxy's replies can be compared with redis-server's byte for byte. A small
decoder turns a reply into Python values only where a comparison rule must look inside it."""

import select
import socket
import time

CRLF = b"\r\n"

# Types whose payload is one line, types with a length-prefixed body, and aggregates (RESP2 and
# RESP3; the test speaks RESP2, the others are here so that a stray RESP3 reply is still framed).
_LINE = frozenset(b"+-:_,#(")
_BULK = frozenset(b"$!=")
_AGGREGATE = frozenset(b"*~>")
_MAP = frozenset(b"%|")


class ReplyTimeout(Exception):
    """No complete reply arrived before the deadline."""


class ConnectionClosed(Exception):
    """The peer closed the connection; `partial` holds the bytes of an incomplete reply."""

    def __init__(self, partial=b""):
        super().__init__("connection closed")
        self.partial = partial


def encode(argv):
    """The RESP array of bulk strings for one request (argv: a list of bytes)."""
    out = [b"*%d\r\n" % len(argv)]
    for arg in argv:
        out.append(b"$%d\r\n%s\r\n" % (len(arg), arg))
    return b"".join(out)


def frame_end(buf, pos=0):
    """The end offset of the reply that starts at buf[pos], or None while it is incomplete."""
    line_end = buf.find(CRLF, pos)
    if line_end < 0:
        return None
    kind = buf[pos]
    after = line_end + 2
    if kind in _LINE:
        return after
    head = bytes(buf[pos + 1:line_end])
    if kind in _BULK:
        length = int(head)
        if length < 0:
            return after
        end = after + length + 2
        return end if len(buf) >= end else None
    if kind in _AGGREGATE or kind in _MAP:
        count = int(head)
        if kind in _MAP:
            count *= 2
        for _ in range(max(count, 0)):
            after = frame_end(buf, after)
            if after is None:
                return None
        return after
    raise ValueError("not a RESP reply: %r" % bytes(buf[pos:pos + 40]))


def decode(data):
    """A complete RESP2 reply as Python values: bytes, int, None, list, or ('err', bytes)."""
    value, end = _decode(data, 0)
    if end != len(data):
        raise ValueError("trailing bytes after a reply")
    return value


def _decode(data, pos):
    line_end = data.index(CRLF, pos)
    kind = data[pos:pos + 1]
    head = data[pos + 1:line_end]
    after = line_end + 2
    if kind == b"+":
        return head, after
    if kind == b"-":
        return ("err", head), after
    if kind == b":":
        return int(head), after
    if kind == b"$":
        length = int(head)
        if length < 0:
            return None, after
        return data[after:after + length], after + length + 2
    if kind == b"*":
        count = int(head)
        if count < 0:
            return None, after
        items = []
        for _ in range(count):
            item, after = _decode(data, after)
            items.append(item)
        return items, after
    raise ValueError("unexpected RESP type %r" % kind)


def encode_value(value):
    """The inverse of decode(), used to write a normalised reply back as RESP."""
    if value is None:
        return b"$-1\r\n"
    if isinstance(value, tuple):
        return b"-" + value[1] + CRLF
    if isinstance(value, int):
        return b":%d\r\n" % value
    if isinstance(value, bytes):
        return b"$%d\r\n%s\r\n" % (len(value), value)
    return b"*%d\r\n" % len(value) + b"".join(encode_value(v) for v in value)


class Connection:
    """One client connection to 127.0.0.1:port with a reply buffer."""

    def __init__(self, port, timeout):
        self.port = port
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = bytearray()

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def send(self, data, timeout=60.0):
        """Write all of data, reading replies into the buffer meanwhile: a server that stops
        reading while its replies wait to be read must not deadlock a large pipelined batch."""
        view = memoryview(data)
        deadline = time.monotonic() + timeout
        while view:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ReplyTimeout()
            readable, writable, _ = select.select([self.sock], [self.sock], [], left)
            if readable:
                chunk = self.sock.recv(1 << 16)
                if not chunk:
                    raise ConnectionClosed(bytes(self.buf))
                self.buf += chunk
            if writable:
                self.sock.settimeout(0)
                try:
                    sent = self.sock.send(view[:1 << 20])
                except BlockingIOError:
                    sent = 0
                view = view[sent:]

    def read_reply(self, timeout):
        """The exact bytes of the next reply; ReplyTimeout or ConnectionClosed otherwise."""
        deadline = time.monotonic() + timeout
        while True:
            if self.buf:
                end = frame_end(self.buf)
                if end is not None:
                    reply = bytes(self.buf[:end])
                    del self.buf[:end]
                    return reply
            left = deadline - time.monotonic()
            if left <= 0:
                raise ReplyTimeout()
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(1 << 16)
            except socket.timeout:
                raise ReplyTimeout() from None
            except OSError:
                chunk = b""
            if not chunk:
                raise ConnectionClosed(bytes(self.buf))
            self.buf += chunk

    def has_reply(self):
        """Whether a complete reply is buffered or bytes wait on the socket (never blocks)."""
        if self.buf and frame_end(self.buf) is not None:
            return True
        readable, _, _ = select.select([self.sock], [], [], 0)
        if readable:
            try:
                self.sock.settimeout(0.001)
                chunk = self.sock.recv(1 << 16)
            except (socket.timeout, BlockingIOError):
                return False
            except OSError:
                return True
            if not chunk:
                return True
            self.buf += chunk
            return frame_end(self.buf) is not None
        return False

    def call(self, argv, timeout):
        """Send one request and return its reply's bytes (for set-up and resynchronisation)."""
        self.send(encode(argv))
        return self.read_reply(timeout)
