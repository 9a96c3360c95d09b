"""Drives shardproxy with an unmodified client library: Debian's python3-redis.

Starts 4 redis-server shards and the proxy (SHARDPROXY_BIN, 2 workers) on free loopback ports,
then uses non-transactional pipelines across shards, hash-tagged keys (MGET, same-tag RENAME),
MULTI/EXEC transactions with WATCH, and pub/sub between clients of different workers. Every
process is stopped by PID in the fixture's finalizer (sp_procs.Processes).
"""

import shutil
import tempfile
import time

import pytest
import redis

from sp_procs import Processes

SHARDS = 4


@pytest.fixture(scope="module")
def deployment(request):
    tmp = tempfile.mkdtemp(prefix="sp-py-")
    procs = Processes(tmp)

    def finalize():
        procs.close()
        shutil.rmtree(tmp, ignore_errors=True)

    request.addfinalizer(finalize)
    shard_ports = [procs.redis("shard%d" % i)[1] for i in range(SHARDS)]
    proxy, port, _metrics = procs.proxy(shard_ports, workers=2)
    return {"proxy": proxy, "port": port, "shard_ports": shard_ports}


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


def test_transaction_on_one_slot(client):
    pipe = client.pipeline(transaction=True)
    pipe.set("{order:7}:state", "new")
    pipe.incr("{order:7}:version")
    pipe.hset("{order:7}:lines", mapping={"sku1": "2", "sku2": "1"})
    pipe.get("{order:7}:state")
    assert pipe.execute() == [True, 1, 2, "new"]
    assert client.hgetall("{order:7}:lines") == {"sku1": "2", "sku2": "1"}


def test_transaction_across_slots_is_refused(client):
    pipe = client.pipeline(transaction=True)
    pipe.set("tx:a", "1")
    pipe.set("tx:b", "2")
    with pytest.raises(redis.ResponseError, match="CROSSSLOT|EXECABORT"):
        pipe.execute()
    assert client.exists("tx:a", "tx:b") == 0  # nothing of the aborted transaction ran


def test_watch_sees_a_concurrent_change(client, deployment):
    other = redis.Redis(host="127.0.0.1", port=deployment["port"], socket_timeout=30,
                        decode_responses=True)
    client.set("{acct:1}:balance", "10")
    with client.pipeline(transaction=True) as pipe:
        pipe.watch("{acct:1}:balance")
        assert pipe.get("{acct:1}:balance") == "10"
        other.set("{acct:1}:balance", "99")  # another client changes it before EXEC
        pipe.multi()
        pipe.set("{acct:1}:balance", "11")
        with pytest.raises(redis.WatchError):
            pipe.execute()
    assert client.get("{acct:1}:balance") == "99"
    other.close()


def test_pubsub_across_clients(client, deployment):
    # Several subscribers, so with 2 workers some share none with the publisher.
    subs = []
    for _ in range(4):
        c = redis.Redis(host="127.0.0.1", port=deployment["port"], socket_timeout=30,
                        decode_responses=True)
        ps = c.pubsub()
        ps.subscribe("py:news")
        msg = ps.get_message(timeout=5)
        assert msg is not None and msg["type"] == "subscribe", msg
        subs.append((c, ps))
    assert client.publish("py:news", "hello") == 4
    for c, ps in subs:
        deadline = time.monotonic() + 5
        msg = None
        while msg is None and time.monotonic() < deadline:
            msg = ps.get_message(timeout=1)
        assert msg is not None and msg["type"] == "message", msg
        assert (msg["channel"], msg["data"]) == ("py:news", "hello")
        ps.close()
        c.close()


def test_two_hundred_megabyte_value(deployment):
    # Default settings: a large value takes long to copy and move, but it moves, so no shard is
    # declared stalled (the proxy once counted its own time parsing the request as the shard's).
    c = redis.Redis(host="127.0.0.1", port=deployment["port"], socket_timeout=120)
    value = bytes(range(256)) * (200 * 4096)
    try:
        assert c.set("py:200m", value) is True
        assert c.get("py:200m") == value
        assert c.delete("py:200m") == 1
        assert c.ping() is True
    finally:
        c.close()


def test_proxy_still_running(deployment):
    assert deployment["proxy"].poll() is None
