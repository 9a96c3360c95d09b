"""Client writes and socket reads through io_uring, and the send(2) and libuv paths beside them.

Starts 2 redis-server shards and shardproxy (SHARDPROXY_BIN, 1 worker, so that every client's
writes meet in one worker's loop turns) on free loopback ports, once with the ring (the default)
and once with --no-io-uring. Many pipelining clients wait on shards held by CLIENT PAUSE, so their
replies complete together and leave in one turn: with the ring, those writes go out in shared
submissions. Every client must get exactly its own replies, in order; large values must come
through whole (short writes, then the queued uv_write); INFO, PROXY CONFIG and /metrics must say
which path ran. Reads: a client paused at its in-flight limit many times over must still get
every reply in order, and the reads must be counted where they ran. Where the kernel refuses
io_uring the proxy logs why and uses send(2) (or libuv's reads); the ring assertions then skip,
naming the log line. Every process is stopped by PID (sp_procs.Processes).
"""

import re
import shutil
import socket
import tempfile
import threading

import pytest

from sp_procs import Processes, http_get, read_exactly, resp

CLIENTS = 40
PIPELINE = 10
BIG = 300 * 1000  # more than a loopback socket takes at once: a short write, then uv_write


def command(port, *args):
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(resp(*args))
        data = b""
        s.settimeout(1.0)
        try:
            while True:
                chunk = s.recv(1 << 16)
                if not chunk:
                    break
                data += chunk
                if data.endswith(b"\r\n") and (data[:1] != b"$" or data.count(b"\r\n") >= 2):
                    break
        except socket.timeout:
            pass
        return data.decode(errors="replace")


def info_field(port, section, key):
    m = re.search(r"^%s:(\S+)\r?$" % re.escape(key), command(port, "INFO", section), re.M)
    assert m, "INFO %s has no %s" % (section, key)
    return m.group(1)


@pytest.fixture(params=["ring", "send"])
def proxy(request):
    tmp = tempfile.mkdtemp(prefix="sp-uring-")
    procs = Processes(tmp)
    try:
        shard_ports = [procs.redis("shard%d" % i)[1] for i in range(2)]
        extra = [] if request.param == "ring" else ["--no-io-uring"]
        proc, port, metrics = procs.proxy(shard_ports, workers=1, extra=extra)
        api = info_field(port, "server", "client_write_api")
        if request.param == "ring" and api != "io_uring":
            pytest.skip("io_uring is not usable here: " + procs.log("proxy"))
        yield {"mode": request.param, "proc": proc, "port": port, "metrics": metrics,
               "shards": shard_ports, "procs": procs}
        assert proc.poll() is None, procs.log("proxy")
    finally:
        procs.close()
        shutil.rmtree(tmp, ignore_errors=True)


def run_clients(port, body):
    """Runs body(index, socket) for CLIENTS connected clients at once; re-raises any failure."""
    errors = []
    sockets = [socket.create_connection(("127.0.0.1", port), timeout=30) for _ in range(CLIENTS)]

    def run(i):
        try:
            body(i, sockets[i])
        except Exception as e:  # noqa: BLE001: reported below, with the client's index
            errors.append("client %d: %r" % (i, e))

    threads = [threading.Thread(target=run, args=(i,)) for i in range(CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    for s in sockets:
        s.close()
    assert not errors, errors[:5]


def test_replies_that_complete_together_reach_their_own_clients(proxy):
    port = proxy["port"]
    before = int(info_field(port, "stats", "io_uring_batched_writes"))
    # Hold the shards: every client's pipeline waits there, and their replies arrive together.
    for shard in proxy["shards"]:
        with socket.create_connection(("127.0.0.1", shard), timeout=10) as s:
            s.sendall(resp("CLIENT", "PAUSE", "400", "ALL"))
            assert s.recv(100) == b"+OK\r\n"
    start = threading.Barrier(CLIENTS)

    def body(i, s):
        requests, expected = b"", b""
        for k in range(PIPELINE):
            value = b"c%d-r%d-" % (i, k) + b"v" * (i + k)
            requests += resp("SET", "uring:%d:%d" % (i, k), value)
            requests += resp("GET", "uring:%d:%d" % (i, k))
            expected += b"+OK\r\n$%d\r\n%s\r\n" % (len(value), value)
        start.wait(10)
        s.sendall(requests)
        got = read_exactly(s, len(expected))
        assert got == expected, "client %d got %r" % (i, got[:200])

    run_clients(port, body)
    batched = int(info_field(port, "stats", "io_uring_batched_writes")) - before
    submits = int(info_field(port, "stats", "io_uring_submits"))
    if proxy["mode"] == "ring":
        assert batched > 0
        assert batched > submits, "no submission carried more than one write"
    else:
        assert batched == 0 and submits == 0
        assert info_field(port, "server", "client_write_api") == "send"


def test_large_values_come_through_whole(proxy):
    port = proxy["port"]

    def body(i, s):
        value = bytes([65 + i % 26]) * BIG
        s.sendall(resp("SET", "big:%d" % i, value) + resp("GET", "big:%d" % i) +
                  resp("GET", "big:%d" % i))
        expected = b"+OK\r\n" + (b"$%d\r\n%s\r\n" % (BIG, value)) * 2
        got = read_exactly(s, len(expected))
        assert got == expected, "client %d: a reply differs at byte %d" % (
            i, next(k for k in range(len(got)) if got[k] != expected[k]))

    run_clients(port, body)


def test_quit_after_a_pipeline_answers_everything_then_closes(proxy):
    with socket.create_connection(("127.0.0.1", proxy["port"]), timeout=10) as s:
        s.sendall(resp("SET", "q", "1") + resp("GET", "q") + resp("QUIT"))
        expected = b"+OK\r\n$1\r\n1\r\n+OK\r\n"
        assert read_exactly(s, len(expected)) == expected
        assert s.recv(10) == b""


def test_the_chosen_path_is_reported(proxy):
    port, ring = proxy["port"], proxy["mode"] == "ring"
    assert info_field(port, "server", "client_write_api") == ("io_uring" if ring else "send")
    listing = command(port, "PROXY", "CONFIG", "GET", "io_uring")
    assert ("io_uring\r\n$%d\r\n%s" % (4 if ring else 5, "true" if ring else "false")) in listing
    _, body = http_get("http://127.0.0.1:%d/metrics" % proxy["metrics"])
    text = body.decode() if isinstance(body, bytes) else body
    assert re.search(r"^shardproxy_io_uring_workers %s$" % ("1" if ring else "0"), text, re.M), \
        [line for line in text.splitlines() if "io_uring" in line]
    assert "shardproxy_client_write_batches_total" in text
    assert "shardproxy_client_batched_writes_total" in text


def test_reads_are_reported_where_they_ran(proxy):
    port, ring = proxy["port"], proxy["mode"] == "ring"
    api = info_field(port, "server", "socket_read_api")
    if ring and api != "io_uring":
        pytest.skip("io_uring reads are not usable here: " + proxy["procs"].log("proxy"))
    assert api == ("io_uring" if ring else "libuv")
    before = int(info_field(port, "stats", "io_uring_reads"))
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        for k in range(20):
            s.sendall(resp("SET", "reads:%d" % k, "v"))
            assert read_exactly(s, 5) == b"+OK\r\n"
    reads = int(info_field(port, "stats", "io_uring_reads")) - before
    if ring:
        assert reads >= 40, "each request is one client read and one shard read: %d" % reads
    else:
        assert reads == 0
    _, body = http_get("http://127.0.0.1:%d/metrics" % proxy["metrics"])
    text = body.decode() if isinstance(body, bytes) else body
    assert re.search(r"^shardproxy_io_uring_read_workers %s$" % ("1" if ring else "0"), text,
                     re.M), [line for line in text.splitlines() if "io_uring" in line]
    assert "shardproxy_io_uring_reads_total" in text


def test_a_client_paused_at_its_inflight_limit_gets_every_reply_in_order(proxy):
    # 20,000 pipelined requests sent at once, far past limits.max_inflight_per_client (1,024):
    # the proxy stops and restarts reading this client again and again (with the ring, by
    # cancelling and re-arming its receive).
    port = proxy["port"]
    paused_before = int(info_field(port, "stats", "client_reads_paused"))
    count = 20000
    requests, expected, seen = [], [], {}
    for k in range(count):
        key = "paused:%d" % (k % 7)
        seen[key] = seen.get(key, 0) + 1
        requests.append(resp("INCR", key))
        expected.append(b":%d\r\n" % seen[key])
    expected = b"".join(expected)
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        # Sent from a thread: the proxy stops reading while the replies wait to be read here.
        sender = threading.Thread(target=s.sendall, args=(b"".join(requests),))
        sender.start()
        got = read_exactly(s, len(expected))
        sender.join(30)
    assert got == expected, "replies differ at byte %d" % next(
        k for k in range(min(len(got), len(expected))) if got[k] != expected[k])
    assert int(info_field(port, "stats", "client_reads_paused")) > paused_before
