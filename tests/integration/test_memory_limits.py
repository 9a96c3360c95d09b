"""Memory follows the bytes that arrive, and running out of it closes one client, never the process.

Starts 2 redis-server shards and shardproxy (SHARDPROXY_BIN, 2 workers) on free loopback ports,
then caps the proxy's address space (RLIMIT_AS, set on the running process: its size at rest plus
a margin) the way `ulimit -v` or `vm.overcommit_memory=2` would. Sanitizer builds reserve
terabytes of shadow memory, so under them these tests skip themselves. Every process is stopped by
PID (sp_procs.Processes).
"""

import os
import re
import resource
import shutil
import socket
import tempfile
import threading
import time

import pytest

from sp_procs import Processes, http_get, resp

SHARDS = 2
MARGIN = 768 << 20  # address space allowed above the proxy's size at rest


def vm_size(pid):
    with open("/proc/%d/status" % pid) as f:
        return int(re.search(r"VmSize:\s+(\d+) kB", f.read()).group(1)) << 10


def rss(pid):
    with open("/proc/%d/status" % pid) as f:
        return int(re.search(r"VmRSS:\s+(\d+) kB", f.read()).group(1)) << 10


def command(port, *args, timeout=10):
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(resp(*args))
        return s.recv(4096)


def closed_total(metrics, reason):
    _, body = http_get("http://127.0.0.1:%d/metrics" % metrics)
    m = re.search(r'shardproxy_client_connections_closed_total\{reason="%s"\} (\S+)' % reason, body)
    return float(m.group(1)) if m else 0.0


@pytest.fixture
def capped():
    if os.environ.get("SHARDPROXY_SANITIZE"):
        pytest.skip("sanitizer builds cannot run under an address-space limit")
    tmp = tempfile.mkdtemp(prefix="sp-mem-")
    procs = Processes(tmp)
    try:
        shard_ports = [procs.redis("shard%d" % i)[1] for i in range(SHARDS)]
        # Under an address-space limit the proxy pages slowly: a generous stall limit.
        config = os.path.join(tmp, "proxy.yaml")
        with open(config, "w") as f:
            f.write("backend:\n  timeout_ms: 60000\n")
        proxy, port, metrics = procs.proxy(shard_ports, workers=2, extra=["--config", config])
        assert command(port, "PING") == b"+PONG\r\n"
        limit = vm_size(proxy.pid) + MARGIN
        resource.prlimit(proxy.pid, resource.RLIMIT_AS, (limit, limit))
        yield {"proxy": proxy, "port": port, "metrics": metrics, "procs": procs}
    finally:
        procs.close()
        shutil.rmtree(tmp, ignore_errors=True)


def test_declared_bulk_lengths_reserve_nothing(capped):
    # Eight clients each claim a 512 MB value (limits.max_bulk_len allows it) and send 10 bytes of
    # it: 4 GB of claims against 768 MB of headroom. Nothing may be reserved for a claim.
    proxy, port = capped["proxy"], capped["port"]
    claims = []
    for i in range(8):
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.sendall(b"*3\r\n$3\r\nSET\r\n$5\r\nbig:%d\r\n$536870912\r\n0123456789" % i)
        claims.append(s)
    time.sleep(0.5)
    assert proxy.poll() is None, capped["procs"].log("proxy")
    assert command(port, "SET", "small", "v") == b"+OK\r\n"
    assert command(port, "GET", "small") == b"$1\r\nv\r\n"
    assert rss(proxy.pid) < 128 << 20, "the claims cost memory: RSS %d" % rss(proxy.pid)
    for s in claims:
        s.close()
    time.sleep(0.2)
    assert proxy.poll() is None, capped["procs"].log("proxy")
    assert command(port, "PING") == b"+PONG\r\n"


def test_values_beyond_the_memory_left_close_only_their_clients(capped):
    # Four clients send 200 MB values at once: the proxy cannot hold them all within its 768 MB of
    # headroom. Each big client gets +OK or loses its connection, and the process stays up.
    proxy, port, metrics = capped["proxy"], capped["port"], capped["metrics"]
    value = b"x" * (200 << 20)
    results = [None] * 4

    def big(i):
        s = socket.create_connection(("127.0.0.1", port), timeout=60)
        try:
            s.sendall(resp("SET", "huge:%d" % i, value))
            results[i] = s.recv(64)
        except OSError as e:  # reset while sending or reading: closed by the proxy
            results[i] = e
        finally:
            s.close()

    # An idle client holds no buffer, so nothing of it can fail while memory runs out; it must
    # find its connection and the proxy as they were. (A client that allocates while memory is
    # exhausted may lose its connection too, as under redis-server: that is not asserted here.)
    idle = socket.create_connection(("127.0.0.1", port), timeout=30)
    idle.sendall(resp("INCR", "counter"))
    assert idle.recv(64) == b":1\r\n"
    threads = [threading.Thread(target=big, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
        assert not t.is_alive()
    assert proxy.poll() is None, capped["procs"].log("proxy")
    for n in range(2, 51):
        idle.sendall(resp("INCR", "counter"))
        assert idle.recv(64) == b":%d\r\n" % n
    idle.close()
    for r in results:
        assert r in (b"+OK\r\n", b"") or isinstance(r, OSError), r
    refused = sum(1 for r in results if r != b"+OK\r\n")
    assert refused >= 1, "all four 200 MB values fit: the limit did not bite"
    assert closed_total(metrics, "out_of_memory") >= refused
    assert command(port, "GET", "counter") == b"$2\r\n50\r\n"
    # Values that were confirmed are whole on their shard.
    for i, r in enumerate(results):
        if r == b"+OK\r\n":
            assert command(port, "STRLEN", "huge:%d" % i) == b":%d\r\n" % len(value)
