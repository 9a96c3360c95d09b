"""Tests of the differential test's RESP reader (resp.py) and the rules that look inside replies
(compare.py, runner.Tracker): every RESP2 and RESP3 type framed whole, at every split point and
with bytes after it; decoded; split into elements; pushes kept out of band on a connection.
Run by ctest as differential.resp (pytest)."""

import os
import socket
import sys
import threading

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pytest  # noqa: E402

import compare  # noqa: E402
import resp  # noqa: E402
from runner import Tracker, is_confirmation, is_message  # noqa: E402

# (frame, decoded value)
VECTORS = [
    (b"+OK\r\n", b"OK"),
    (b"-ERR boom\r\n", ("err", b"ERR boom")),
    (b":-42\r\n", -42),
    (b"$5\r\nhe\r\no\r\n", b"he\r\no"),
    (b"$0\r\n\r\n", b""),
    (b"$-1\r\n", None),
    (b"*-1\r\n", None),
    (b"*0\r\n", []),
    (b"*2\r\n:1\r\n*1\r\n$1\r\nx\r\n", [1, [b"x"]]),
    (b"_\r\n", None),
    (b",3.5\r\n", 3.5),
    (b",-inf\r\n", float("-inf")),
    (b"#t\r\n", True),
    (b"#f\r\n", False),
    (b"(123456789012345678901234567890\r\n", 123456789012345678901234567890),
    (b"!21\r\nSYNTAX invalid syntax\r\n", ("err", b"SYNTAX invalid syntax")),
    (b"=15\r\ntxt:Some string\r\n", b"Some string"),
    (b"%2\r\n$1\r\na\r\n:1\r\n+b\r\n*1\r\n_\r\n", {b"a": 1, b"b": [None]}),
    (b"~2\r\n:1\r\n$1\r\nx\r\n", [1, b"x"]),
    (b"|1\r\n+ttl\r\n:3600\r\n$3\r\nval\r\n", b"val"),
    (b"*2\r\n|1\r\n+a\r\n:1\r\n:7\r\n:8\r\n", [7, 8]),
    (b">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n", [b"message", b"ch", b"hi"]),
    (b"$?\r\n;4\r\nHell\r\n;2\r\no!\r\n;0\r\n", b"Hello!"),
    (b"*?\r\n:1\r\n$1\r\nx\r\n.\r\n", [1, b"x"]),
    (b"%?\r\n+a\r\n:1\r\n.\r\n", {b"a": 1}),
]


@pytest.mark.parametrize("frame,value", VECTORS)
def test_framed_whole_at_every_split_and_with_more_after(frame, value):
    assert resp.frame_end(frame) == len(frame)
    for cut in range(1, len(frame)):
        assert resp.frame_end(frame[:cut]) is None, cut
    assert resp.frame_end(frame + b"+OK\r\n") == len(frame)
    assert resp.frame_end(b"+OK\r\n" + frame, 5) == 5 + len(frame)


@pytest.mark.parametrize("frame,value", VECTORS)
def test_decoded(frame, value):
    got = resp.decode(frame)
    assert got == value
    assert isinstance(got, resp.Push) == frame.startswith(b">")


@pytest.mark.parametrize("frame,value", VECTORS)
def test_split_keeps_every_byte(frame, value):
    parts = resp.split(frame)
    if parts is None:
        assert frame[:1] not in b"*~>%" or frame[1:2] in (b"-", b"?")
        return
    head, items = parts
    assert head + b"".join(items) == frame
    assert all(resp.frame_end(item) == len(item) for item in items)


def test_not_resp_and_too_deep():
    with pytest.raises(ValueError):
        resp.frame_end(b"?what\r\n")
    with pytest.raises(ValueError):
        resp.frame_end(b"*1\r\n" * (resp.MAX_DEPTH + 2) + b":1\r\n")


def test_push_kinds():
    message = b">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$1\r\nm\r\n"
    confirm = b">3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n"
    assert resp.is_push(message) and resp.push_kind(message) == b"message"
    assert is_message(message) and not is_confirmation(message)
    assert is_confirmation(confirm) and not is_message(confirm)
    assert not resp.is_push(b"*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n")
    assert resp.is_push(b"|1\r\n+a\r\n:1\r\n" + message)


class Peer:
    """A loopback listener that sends the given chunks, one by one, to the client that
    connects."""

    def __init__(self, chunks):
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(1)
        self.port = self.listener.getsockname()[1]
        self.chunks = chunks
        self.thread = threading.Thread(target=self._serve)
        self.thread.start()

    def _serve(self):
        sock, _ = self.listener.accept()
        with sock:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            for chunk in self.chunks:
                sock.sendall(chunk)
            sock.recv(1)            # until the client closes

    def close(self):
        self.thread.join(5)
        self.listener.close()


def test_connection_keeps_pushes_out_of_band():
    sub = b">3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n"
    msg = b">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$1\r\nm\r\n"
    stream = sub + msg + b"+PONG\r\n" + msg + b"$1\r\nx\r\n" + b"%0\r\n"
    peer = Peer([stream[i:i + 1] for i in range(len(stream))])     # byte by byte
    conn = resp.Connection(peer.port, 5)
    try:
        assert conn.read_reply_or_push(5, is_confirmation) == (sub, True)
        assert conn.read_reply(5) == b"+PONG\r\n"       # passes over a message
        assert conn.read_reply_or_push(5, is_confirmation) == (b"$1\r\nx\r\n", False)
        assert conn.read_push(5, is_message) == msg
        assert conn.read_reply(5) == b"%0\r\n"
        assert conn.take_pushes() == [msg]
        assert conn.take_pushes() == []
        with pytest.raises(resp.ReplyTimeout):
            conn.read_reply(0.05)
    finally:
        conn.close()
        peer.close()


def test_normalise_unordered_and_hello_keep_types():
    assert compare.normalise([b"SMEMBERS", b"k"], b"~2\r\n$1\r\nb\r\n$1\r\na\r\n") == \
        b"~2\r\n$1\r\na\r\n$1\r\nb\r\n"
    assert compare.normalise([b"KEYS", b"*"], b"*-1\r\n") == b"*-1\r\n"
    def hello(client_id):
        return (b"%3\r\n$6\r\nserver\r\n$5\r\nredis\r\n$2\r\nid\r\n:" + client_id +
                b"\r\n$5\r\nproto\r\n:3\r\n")
    assert compare.normalise([b"HELLO", b"3"], hello(b"5")) == \
        compare.normalise([b"HELLO", b"3"], hello(b"9"))
    assert compare.normalise([b"HELLO", b"3"], hello(b"5")).startswith(b"%3\r\n")
    assert compare.normalise([b"HELLO", b"3"], hello(b"5").replace(b"redis", b"other")) != \
        compare.normalise([b"HELLO", b"3"], hello(b"5"))
    # EXEC: each element as the command it answers, the others kept byte for byte.
    assert compare.normalise([b"EXEC"], b"*2\r\n:5\r\n+OK\r\n", [[b"TTL", b"k"], [b"SET"]]) == \
        b"*2\r\n:<time left>\r\n+OK\r\n"


def test_unsubscribe_confirmations_sorted_by_channel():
    def push(channel, count):
        return b">3\r\n$11\r\nunsubscribe\r\n$%d\r\n%s\r\n:%d\r\n" % (len(channel), channel, count)
    got = compare.normalise_frames([b"UNSUBSCRIBE"], [push(b"ch2", 1), push(b"ch1", 0)])
    assert got == [push(b"ch1", 1), push(b"ch2", 0)]


def test_tracker_follows_hello_and_reset():
    t = Tracker(proto=3)
    assert t.pushed([b"SUBSCRIBE", b"ch"])
    t.observe([b"SUBSCRIBE", b"ch"], [b">3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n"])
    assert t.channels == {b"ch"}
    t.observe([b"RESET"], [b"+RESET\r\n"])
    assert t.proto == 2 and not t.subscribed and not t.pushed([b"SUBSCRIBE", b"ch"])
    t.observe([b"HELLO", b"3"], [b"%7\r\n"])
    assert t.proto == 3
    t.observe([b"HELLO", b"2"], [b"-NOPROTO x\r\n"])
    assert t.proto == 3
    t.observe([b"HELLO", b"2"], [b"*14\r\n"])
    assert t.proto == 2
