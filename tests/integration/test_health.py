"""Health endpoints for load balancers and supervisors, with the real programs: /healthz and
/readyz on the metrics listener and PROXY HEALTH over RESP, while a shard is killed and started
again on its port, with metrics.ready_quorum at 100% (the default) and at 50%.

Starts 2 redis-server shards and shardproxy (SHARDPROXY_BIN, 2 workers) on free loopback ports;
every process is stopped by PID (sp_procs.Processes).
"""

import os
import tempfile
import time
import urllib.error
import urllib.request

import pytest
import redis

from sp_procs import Processes, stop, wait_for_port


def get(url):
    """(status, body) of a GET, whatever the status."""
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def wait_until(predicate, timeout=20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    return predicate()


def restart_shard(procs, name, port):
    d = os.path.join(procs.tmp, name)
    p = procs.spawn(["/usr/bin/redis-server", "--port", str(port), "--bind", "127.0.0.1",
                     "--save", "", "--appendonly", "no", "--dir", d, "--daemonize", "no"],
                    name + "-again")
    assert wait_for_port(port, p), procs.log(name + "-again")
    return p


@pytest.fixture
def procs():
    p = Processes(tempfile.mkdtemp(prefix="sp-health-"))
    yield p
    p.close()


def test_readyz_follows_a_shard_down_and_back(procs):
    s0, p0 = procs.redis("s0")
    s1, p1 = procs.redis("s1")
    _, port, metrics = procs.proxy([p0, p1])
    base = "http://127.0.0.1:%d" % metrics
    client = redis.Redis(port=port, decode_responses=True)

    assert get(base + "/healthz") == (200, "ok: 2 workers serving\n")
    status, body = wait_until(lambda: (s := get(base + "/readyz"))[0] == 200 and s)
    assert status == 200, body
    assert body.startswith("ready: 2 of 2 shards have a healthy connection in every worker"), body
    health = client.execute_command("PROXY", "HEALTH")
    assert health == "# healthz (200)\nok: 2 workers serving\n# readyz (200)\n" + body

    stop(s1)
    # Each worker notices the lost shard on its own connection: wait until both have.
    gone = "127.0.0.1:%d): no healthy connection in worker 0, 1\n" % p1
    seen = wait_until(lambda: (s := get(base + "/readyz"))[0] == 503 and gone in s[1] and s)
    assert seen, get(base + "/readyz")
    status, body = seen
    assert body.startswith("not ready: 1 of 2 shards"), body
    assert "2 needed (metrics.ready_quorum 100%)" in body
    assert gone in body, body
    # Liveness is about the proxy, not its shards.
    assert get(base + "/healthz")[0] == 200
    health = client.execute_command("PROXY", "HEALTH")
    assert "# readyz (503)\nnot ready: 1 of 2 shards" in health, health
    client.set("b", 1)  # slot 3300: the shard that is up still serves

    restart_shard(procs, "s1", p1)
    status, body = wait_until(lambda: (s := get(base + "/readyz"))[0] == 200 and s)
    assert status == 200, body
    assert body.startswith("ready: 2 of 2 shards"), body


def test_a_quorum_tolerates_a_shard_down(procs):
    s0, p0 = procs.redis("s0")
    s1, p1 = procs.redis("s1")
    config = os.path.join(procs.tmp, "proxy.yaml")
    with open(config, "w") as f:
        f.write("metrics:\n  ready_quorum: 50\n")
    _, port, metrics = procs.proxy([p0, p1], extra=["--config", config])
    base = "http://127.0.0.1:%d" % metrics
    assert wait_until(lambda: get(base + "/readyz")[0] == 200)
    stop(s1)
    status, body = wait_until(
        lambda: (s := get(base + "/readyz"))[1].startswith("ready: 1 of 2") and s)
    assert status == 200, body
    assert "1 needed (metrics.ready_quorum 50%)" in body, body
    assert "no healthy connection in worker 0, 1" in body, body
    stop(s0)
    status, body = wait_until(lambda: (s := get(base + "/readyz"))[0] == 503 and s)
    assert status == 503, body
    assert body.startswith("not ready: 0 of 2 shards"), body
    assert redis.Redis(port=port).execute_command("PROXY", "CONFIG", "GET",
                                                  "metrics.ready_quorum") == [
        b"metrics.ready_quorum", b"50"]


def test_pages_answer_head_and_only_their_own_path(procs):
    _, p0 = procs.redis("s0")
    _, port, metrics = procs.proxy([p0])
    base = "http://127.0.0.1:%d" % metrics
    req = urllib.request.Request(base + "/healthz", method="HEAD")
    with urllib.request.urlopen(req, timeout=10) as r:
        assert r.status == 200
        assert r.read() == b""
    assert get(base + "/healthz/extra")[0] == 404
    assert get(base + "/ready")[0] == 404
    status, body = get(base + "/metrics")
    assert status == 200 and "shardproxy_workers 2" in body
