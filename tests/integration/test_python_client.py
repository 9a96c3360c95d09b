"""Drives shardproxy with an unmodified client library: Debian's python3-redis.

Starts 4 redis-server shards and the proxy (SHARDPROXY_BIN) on free loopback ports, then uses
non-transactional pipelines across shards and hash-tagged keys (MGET, same-tag RENAME). Every
process is stopped by PID in the fixture's finalizer.
"""

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import pytest
import redis

SHARDS = 4


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port, proc, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return True
        except OSError:
            time.sleep(0.02)
    return False


def stop(proc):
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.fixture(scope="module")
def deployment(request):
    binary = os.environ.get("SHARDPROXY_BIN")
    if not binary or not os.access(binary, os.X_OK):
        pytest.fail("SHARDPROXY_BIN must name the shardproxy binary")
    tmp = tempfile.mkdtemp(prefix="sp-py-")
    procs = []
    logs = []

    def finalize():
        for p in reversed(procs):
            stop(p)
        for f in logs:
            f.close()
        shutil.rmtree(tmp, ignore_errors=True)

    request.addfinalizer(finalize)

    def spawn(argv, name):
        log = open(os.path.join(tmp, name + ".log"), "wb")
        logs.append(log)
        p = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        procs.append(p)
        return p

    shard_ports = []
    for i in range(SHARDS):
        for _attempt in range(5):
            port = free_port()
            d = os.path.join(tmp, "shard%d" % i)
            os.makedirs(d, exist_ok=True)
            p = spawn(["/usr/bin/redis-server", "--port", str(port), "--bind", "127.0.0.1",
                       "--save", "", "--appendonly", "no", "--dir", d, "--daemonize", "no"],
                      "shard%d" % i)
            if wait_for_port(port, p):
                shard_ports.append(port)
                break
            stop(p)
        else:
            pytest.fail("redis-server shard %d did not start" % i)

    shards = ",".join("127.0.0.1:%d" % p for p in shard_ports)
    proxy_port = free_port()
    proxy = spawn([binary, "--listen", "127.0.0.1", "--port", str(proxy_port), "--workers", "1",
                   "--shards", shards, "--log-level", "info", "--metrics-listen", "off"], "proxy")
    if not wait_for_port(proxy_port, proxy):
        with open(os.path.join(tmp, "proxy.log"), "rb") as f:
            pytest.fail("shardproxy did not start:\n" + f.read().decode(errors="replace"))
    return {"proxy": proxy, "port": proxy_port, "shard_ports": shard_ports}


@pytest.fixture
def client(deployment):
    c = redis.Redis(host="127.0.0.1", port=deployment["port"], socket_timeout=30,
                    decode_responses=True)
    yield c
    c.close()


def shard_sizes(deployment):
    sizes = []
    for port in deployment["shard_ports"]:
        c = redis.Redis(host="127.0.0.1", port=port, socket_timeout=10)
        sizes.append(c.dbsize())
        c.close()
    return sizes


def test_ping_and_basic_commands(client):
    assert client.ping() is True
    assert client.set("py:a", "1") is True
    assert client.get("py:a") == "1"
    assert client.incr("py:counter") == 1
    assert client.hset("py:h", mapping={"x": "1", "y": "2"}) == 2
    assert client.hgetall("py:h") == {"x": "1", "y": "2"}
    assert client.echo("hi") == "hi"


def test_pipeline_across_shards(client, deployment):
    before = sum(shard_sizes(deployment))
    pipe = client.pipeline(transaction=False)
    for i in range(1000):
        pipe.set("pp:%d" % i, "v%d" % i)
        pipe.incr("pp:n:%d" % (i % 10))
        pipe.get("pp:%d" % i)
    results = pipe.execute()
    assert len(results) == 3000
    counts = {}
    for i in range(1000):
        assert results[3 * i] is True
        counts[i % 10] = counts.get(i % 10, 0) + 1
        assert results[3 * i + 1] == counts[i % 10]
        assert results[3 * i + 2] == "v%d" % i
    sizes = shard_sizes(deployment)
    assert sum(sizes) - before == 1010
    assert all(s > 0 for s in sizes), sizes

    pipe = client.pipeline(transaction=False)
    pipe.mget(["pp:%d" % i for i in range(0, 1000, 97)] + ["pp:missing"])
    pipe.delete(*["pp:%d" % i for i in range(500)])
    pipe.exists(*["pp:%d" % i for i in range(1000)])
    mget, deleted, exists = pipe.execute()
    assert mget == ["v%d" % i for i in range(0, 1000, 97)] + [None]
    assert deleted == 500
    assert exists == 500


def test_hash_tags(client):
    assert client.mset({"{user:1}:name": "ann", "{user:1}:email": "ann@example.com"}) is True
    assert client.mget(["{user:1}:name", "{user:1}:email", "{user:1}:missing"]) == [
        "ann", "ann@example.com", None]
    assert client.rename("{user:1}:name", "{user:1}:fullname") is True
    assert client.get("{user:1}:fullname") == "ann"
    assert client.exists("{user:1}:name") == 0
    pipe = client.pipeline(transaction=False)
    pipe.sadd("{user:1}:tags", "a", "b")
    pipe.sadd("{user:1}:more", "b", "c")
    pipe.sinter("{user:1}:tags", "{user:1}:more")
    assert pipe.execute() == [2, 2, {"b"}]


def test_cross_slot_and_unsupported(client):
    client.set("a", "1")
    with pytest.raises(redis.ResponseError, match="CROSSSLOT"):
        client.rename("a", "b")
    with pytest.raises(redis.ResponseError, match="not supported by shardproxy"):
        client.execute_command("MONITOR")
    assert client.get("a") == "1"


def test_proxy_still_running(deployment):
    assert deployment["proxy"].poll() is None
