"""Two proxies on one host with the default metrics address do not collide: when 127.0.0.1:9121 is
taken, a proxy that was not told where to serve /metrics moves to the next free port and says so;
one that was told (--metrics-listen) refuses to start and names the address.

Holds 127.0.0.1:9121 for the test's duration (or finds it already held), starts a redis-server and
two shardproxy processes (SHARDPROXY_BIN) on free loopback ports; every process is stopped by PID.
"""

import errno
import os
import socket
import subprocess
import tempfile
import urllib.request

import pytest
import redis

from sp_procs import Processes, free_port, wait_for_port

DEFAULT_PORT = 9121


@pytest.fixture
def procs():
    p = Processes(tempfile.mkdtemp(prefix="sp-metrics-port-"))
    yield p
    p.close()


@pytest.fixture
def default_port_taken():
    """Holds 127.0.0.1:9121 (or leaves it to whoever already holds it)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind(("127.0.0.1", DEFAULT_PORT))
        s.listen(1)
    except OSError as e:
        assert e.errno == errno.EADDRINUSE, e
    yield
    s.close()


def start_proxy(procs, shard, name, extra=()):
    binary = os.environ["SHARDPROXY_BIN"]
    port = free_port()
    p = procs.spawn([binary, "--listen", "127.0.0.1", "--port", str(port), "--workers", "1",
                     "--shards", "127.0.0.1:%d" % shard, "--log-level", "info"] + list(extra),
                    name)
    assert wait_for_port(port, p), procs.log(name)
    return p, port


def metrics_port(port):
    info = redis.Redis(port=port).info("server")
    return int(info["metrics_port"])


def test_the_default_moves_to_a_free_port(procs, default_port_taken):
    _, shard = procs.redis("s0")
    _, a = start_proxy(procs, shard, "proxy-a")
    _, b = start_proxy(procs, shard, "proxy-b")
    ports = {"proxy-a": metrics_port(a), "proxy-b": metrics_port(b)}
    assert ports["proxy-a"] != ports["proxy-b"], ports
    for name, port in ports.items():
        assert DEFAULT_PORT < port <= DEFAULT_PORT + 10, port
        with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=10) as r:
            assert r.status == 200
            assert "shardproxy_workers 1" in r.read().decode()
        log = procs.log(name)
        assert ("metrics: 127.0.0.1:9121 is in use (another shardproxy?); serving /metrics on "
                "127.0.0.1:%d instead; set metrics.listen or --metrics-listen to choose" % port
                ) in log, log
        assert "metrics on http://127.0.0.1:%d/metrics" % port in log, log


def test_a_given_address_that_is_taken_is_an_error(procs, default_port_taken):
    _, shard = procs.redis("s0")
    r = subprocess.run([os.environ["SHARDPROXY_BIN"], "--listen", "127.0.0.1", "--port",
                        str(free_port()), "--shards", "127.0.0.1:%d" % shard,
                        "--metrics-listen", "127.0.0.1:%d" % DEFAULT_PORT],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 1, r
    assert "metrics.listen 127.0.0.1:9121: cannot listen there" in r.stderr, r.stderr
    assert "--metrics-listen off" in r.stderr, r.stderr
