"""RESP for the differential test: encode a request, and read replies off a socket as their exact
bytes, so that the proxy's replies can be compared with redis-server's byte for byte. A small
decoder turns a reply into Python values only where a comparison rule must look inside it.

Every RESP2 and RESP3 type is framed: simple string +, error -, integer :, bulk $, array *,
null _, double ,, boolean #, big number (, blob error !, verbatim string =, map %, set ~,
attribute | (framed together with the value it annotates), push >, and the streamed forms
($? with ; chunks, *? ~? %? >? ending in .). A push is out of band: a Connection keeps the
pushes it reads apart from the replies, so that read_reply() returns the reply to the next
request even when pub/sub messages arrive in between.
"""

import select
import socket
import time

CRLF = b"\r\n"

# Types whose payload is one line, types with a length-prefixed body, and aggregates.
_LINE = frozenset(b"+-:_,#(")
_BULK = frozenset(b"$!=")
_AGGREGATE = frozenset(b"*~>")
_MAP = frozenset(b"%|")
MAX_DEPTH = 64          # nesting a reply may have; deeper is garbage, not a reply


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


# ---- framing ----

def frame_end(buf, pos=0, depth=0):
    """The end offset of the reply that starts at buf[pos], or None while it is incomplete.
    An attribute and the value after it are one reply. ValueError when it is not RESP."""
    if depth > MAX_DEPTH:
        raise ValueError("a reply nested deeper than %d" % MAX_DEPTH)
    line_end = buf.find(CRLF, pos)
    if line_end < 0:
        return None
    kind = buf[pos]
    after = line_end + 2
    if kind in _LINE:
        return after
    head = bytes(buf[pos + 1:line_end])
    if head == b"?":
        return _streamed_end(buf, kind, after, depth)
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
            after = frame_end(buf, after, depth + 1)
            if after is None:
                return None
        if kind == ord("|"):        # the annotated value follows its attribute
            return frame_end(buf, after, depth + 1)
        return after
    raise ValueError("not a RESP reply: %r" % bytes(buf[pos:pos + 40]))


def _streamed_end(buf, kind, after, depth):
    """The end of a streamed string ($? then ;len chunks up to ;0) or a streamed aggregate
    (*? ~? %? >? then elements up to .)."""
    if kind == ord("$"):
        while True:
            line_end = buf.find(CRLF, after)
            if line_end < 0:
                return None
            if buf[after] != ord(";"):
                raise ValueError("not a streamed string chunk: %r" % bytes(buf[after:after + 40]))
            length = int(bytes(buf[after + 1:line_end]))
            if length == 0:
                return line_end + 2
            after = line_end + 2 + length + 2
            if len(buf) < after:
                return None
    if kind in _AGGREGATE or kind == ord("%"):
        while True:
            if len(buf) < after + 3:
                return None
            if buf[after:after + 3] == b".\r\n":
                return after + 3
            after = frame_end(buf, after, depth + 1)
            if after is None:
                return None
    raise ValueError("not a streamed RESP type: %r" % chr(kind))


def _skip_attribute(frame):
    """The offset of the value in a reply (past an attribute, if it starts with one)."""
    if frame[:1] != b"|":
        return 0
    line_end = frame.index(CRLF)
    after = line_end + 2
    for _ in range(2 * int(frame[1:line_end])):
        after = frame_end(frame, after)
    return after


def is_push(frame):
    return frame[_skip_attribute(frame):][:1] == b">"


def split(frame):
    """(head, elements) of a counted aggregate reply (* ~ > %, a map's keys and values in
    turn), each element its exact bytes, such that head + b"".join(elements) == frame;
    None for anything else (a scalar, a null, a streamed aggregate)."""
    start = _skip_attribute(frame)
    kind = frame[start:start + 1]
    if kind not in (b"*", b"~", b">", b"%"):
        return None
    line_end = frame.index(CRLF, start)
    head = frame[start + 1:line_end]
    if head == b"?" or int(head) < 0:
        return None
    count = int(head) * (2 if kind == b"%" else 1)
    items = []
    pos = line_end + 2
    for _ in range(count):
        end = frame_end(frame, pos)
        items.append(frame[pos:end])
        pos = end
    return frame[:line_end + 2], items


def push_kind(frame):
    """The first element of a push (b"message", b"subscribe", ...), lower case; None for
    anything else."""
    parts = split(frame) if is_push(frame) else None
    if not parts or not parts[1]:
        return None
    first = decode(parts[1][0])
    return first.lower() if isinstance(first, bytes) else None


# ---- decoding, where a rule must look inside ----

class Push(list):
    """A decoded push (a list, told apart from an array)."""


def decode(data):
    """A complete reply as Python values: bytes (simple, bulk and verbatim strings), int
    (integer, big number), float (double), bool, None (every null), list (array, set),
    Push, dict (map), ('err', bytes) for both error types. An attribute is dropped."""
    value, end = _decode(data, 0, 0)
    if end != len(data):
        raise ValueError("trailing bytes after a reply")
    return value


def _hashable(value):
    return tuple(_hashable(v) for v in value) if isinstance(value, list) else value


def _decode(data, pos, depth):
    if depth > MAX_DEPTH:
        raise ValueError("a reply nested deeper than %d" % MAX_DEPTH)
    line_end = data.index(CRLF, pos)
    kind = data[pos:pos + 1]
    head = data[pos + 1:line_end]
    after = line_end + 2
    if kind == b"+":
        return head, after
    if kind == b"-":
        return ("err", head), after
    if kind in (b":", b"("):
        return int(head), after
    if kind == b"_":
        return None, after
    if kind == b"#":
        if head not in (b"t", b"f"):
            raise ValueError("not a boolean: %r" % head)
        return head == b"t", after
    if kind == b",":
        return float(head), after          # float() reads inf, -inf and nan too
    if kind in (b"$", b"!", b"="):
        if head == b"?":
            return _decode_streamed_string(data, after)
        length = int(head)
        if length < 0:
            return None, after
        body = data[after:after + length]
        if kind == b"!":
            body = ("err", body)
        elif kind == b"=":
            body = body[4:]                 # past "txt:" / "mkd:"
        return body, after + length + 2
    if kind in (b"*", b"~", b">", b"%", b"|"):
        streamed = head == b"?"
        count = -1 if streamed else int(head)
        if count < 0 and not streamed:
            return None, after
        items = []
        per_entry = 2 if kind in (b"%", b"|") else 1
        while (data[after:after + 3] != b".\r\n") if streamed else len(items) < count * per_entry:
            item, after = _decode(data, after, depth + 1)
            items.append(item)
        if streamed:
            after += 3
        if kind == b"|":
            return _decode(data, after, depth + 1)
        if kind == b"%":
            return {_hashable(k): v for k, v in zip(items[::2], items[1::2])}, after
        return (Push(items) if kind == b">" else items), after
    raise ValueError("unexpected RESP type %r" % kind)


def _decode_streamed_string(data, pos):
    chunks = []
    while True:
        line_end = data.index(CRLF, pos)
        length = int(data[pos + 1:line_end])
        if length == 0:
            return b"".join(chunks), line_end + 2
        chunks.append(data[line_end + 2:line_end + 2 + length])
        pos = line_end + 2 + length + 2


# ---- a client connection ----

class Connection:
    """One client connection to 127.0.0.1:port. Bytes read go to a buffer; complete frames
    are taken off it into a queue in the order they came, each marked as a push or not. A
    reader takes the first frame of the kind it wants and leaves the others in order."""

    def __init__(self, port, timeout):
        self.port = port
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = bytearray()
        self.frames = []            # (frame, is_push), in arrival order

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

    def _take_frames(self):
        """Move the complete frames at the head of the buffer to the queue."""
        pos = 0
        while pos < len(self.buf):
            end = frame_end(self.buf, pos)
            if end is None:
                break
            frame = bytes(self.buf[pos:end])
            self.frames.append((frame, is_push(frame)))
            pos = end
        if pos:
            del self.buf[:pos]

    def _wait(self, timeout, want):
        """Read until a queued frame passes want(frame, is_push); take out the first that does
        and return (frame, is_push)."""
        deadline = time.monotonic() + timeout
        while True:
            self._take_frames()
            for i, (frame, pushed) in enumerate(self.frames):
                if want(frame, pushed):
                    return self.frames.pop(i)
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

    def read_reply(self, timeout):
        """The exact bytes of the next reply that is not a push; ReplyTimeout or
        ConnectionClosed otherwise. Pushes before it stay queued."""
        return self._wait(timeout, lambda frame, pushed: not pushed)[0]

    def read_push(self, timeout, accept=None):
        """The first push that accept(frame) takes (any push without accept); the frames it
        passes over stay queued, in order."""
        return self._wait(timeout, lambda frame, pushed: pushed and
                          (accept is None or accept(frame)))[0]

    def read_reply_or_push(self, timeout, accept):
        """(frame, is_push): the first of a reply and a push that accept takes."""
        return self._wait(timeout, lambda frame, pushed: not pushed or accept(frame))

    def _poll(self):
        """Read what is waiting on the socket without blocking; False once it is closed."""
        while select.select([self.sock], [], [], 0)[0]:
            try:
                self.sock.settimeout(0.001)
                chunk = self.sock.recv(1 << 16)
            except (socket.timeout, BlockingIOError):
                break
            except OSError:
                return False
            if not chunk:
                return False
            self.buf += chunk
        self._take_frames()
        return True

    def has_reply(self):
        """Whether a reply (not a push) is there, or the connection closed (never blocks)."""
        closed = not self._poll()
        return closed or any(not pushed for _, pushed in self.frames)

    def take_pushes(self):
        """Every push that has arrived by now, in order (never blocks)."""
        self._poll()
        pushes = [frame for frame, pushed in self.frames if pushed]
        self.frames = [(frame, pushed) for frame, pushed in self.frames if not pushed]
        return pushes

    def call(self, argv, timeout):
        """Send one request and return its reply's bytes (for set-up and resynchronisation)."""
        self.send(encode(argv))
        return self.read_reply(timeout)
