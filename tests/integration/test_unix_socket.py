"""Unix sockets on both sides, with the real programs: shardproxy accepts clients on a Unix socket
(alone or beside TCP, with the file mode asked for) and reaches shards that listen only on Unix
sockets (redis-server --port 0 --unixsocket). redis-py and redis-cli connect to the socket; what
CLIENT LIST and CONFIG GET say is compared with redis-server's own answers; a shard killed and
started again on its socket is reconnected; a stale socket file is replaced, a live one or a
regular file refused; the file is removed on exit.

Starts redis-server shards and shardproxy (SHARDPROXY_BIN) in a temporary directory, TCP only on
free loopback ports; every process is stopped by PID (sp_procs.Processes).
"""

import os
import re
import socket
import stat
import subprocess
import tempfile

import pytest
import redis

from sp_procs import Processes, free_port, stop, wait_for, wait_for_port


@pytest.fixture
def procs():
    p = Processes(tempfile.mkdtemp(prefix="sp-unix-"))
    yield p
    p.close()


def answers(path):
    try:
        return redis.Redis(unix_socket_path=path, socket_timeout=2).ping()
    except (redis.ConnectionError, redis.TimeoutError, OSError):
        return False


def unix_redis(procs, name, perm="700"):
    """A redis-server on a Unix socket only; (proc, path)."""
    d = os.path.join(procs.tmp, name)
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "redis.sock")
    p = procs.spawn(["/usr/bin/redis-server", "--port", "0", "--unixsocket", path,
                     "--unixsocketperm", perm, "--save", "", "--appendonly", "no", "--dir", d,
                     "--daemonize", "no"], name)
    assert wait_for(lambda: answers(path)), procs.log(name)
    return p, path


def start_proxy(procs, shards, args, name="proxy", wait_path=None, port=None):
    argv = [os.environ["SHARDPROXY_BIN"], "--workers", "2", "--metrics-listen", "off",
            "--shards", ",".join(shards), "--log-level", "info"] + args
    p = procs.spawn(argv, name)
    if port is not None:
        assert wait_for_port(port, p), procs.log(name)
    if wait_path is not None:
        assert wait_for(lambda: answers(wait_path)), procs.log(name)
    return p


def client_fields(line):
    return dict(f.split("=", 1) for f in line.split(" "))


def test_clients_and_shards_on_unix_sockets(procs):
    _, a = unix_redis(procs, "a")
    _, b = unix_redis(procs, "b")
    sock = os.path.join(procs.tmp, "proxy.sock")
    port = free_port()
    proxy = start_proxy(procs, ["unix:" + a, b],
                        ["--listen", "unix:" + sock, "--unix-perm", "660", "--port", str(port)],
                        wait_path=sock, port=port)
    assert stat.S_IMODE(os.stat(sock).st_mode) == 0o660
    over_unix = redis.Redis(unix_socket_path=sock, decode_responses=True)
    over_tcp = redis.Redis(port=port, decode_responses=True)
    for i in range(400):
        (over_unix if i % 2 else over_tcp).set("k%d" % i, "v%d" % i)
    assert [over_tcp.get("k%d" % i) for i in range(400)] == ["v%d" % i for i in range(400)]
    assert over_unix.mget(["{t}1", "{t}2"]) == [None, None]
    # Every key is on the shard its slot names, and both shards hold some.
    sizes = [redis.Redis(unix_socket_path=p).dbsize() for p in (a, b)]
    assert sum(sizes) == 400 and min(sizes) > 100, sizes
    assert over_unix.execute_command("DBSIZE") == 400

    # CLIENT LIST and CONFIG GET as redis-server answers them on its own socket.
    mine = client_fields(over_unix.execute_command("CLIENT", "LIST", "ID",
                                                   over_unix.client_id()).strip())
    theirs = client_fields(redis.Redis(unix_socket_path=a, decode_responses=True)
                           .execute_command("CLIENT", "INFO").strip())
    assert (mine["addr"], mine["laddr"], mine["flags"]) == (sock + ":0", sock + ":0", "U"), mine
    assert (theirs["addr"], theirs["laddr"], theirs["flags"]) == (a + ":0", a + ":0", "U"), theirs
    tcp_line = client_fields(over_tcp.execute_command("CLIENT", "INFO").strip())
    assert tcp_line["flags"] == "N" and tcp_line["addr"].startswith("127.0.0.1:"), tcp_line
    assert over_unix.config_get("unixsocket*") == {"unixsocket": sock, "unixsocketperm": "660"}
    assert over_unix.config_get("port") == {"port": str(port)}

    # redis-cli, a real client of its own, on the proxy's socket.
    out = subprocess.run(["redis-cli", "-s", sock, "GET", "k7"], capture_output=True, text=True,
                         timeout=30)
    assert out.stdout == "v7\n", out

    stop(proxy)
    assert proxy.returncode == 0, procs.log("proxy")
    assert not os.path.exists(sock)


def test_a_unix_shard_killed_and_started_again(procs):
    _, a = unix_redis(procs, "a")
    shard_b, b = unix_redis(procs, "b")
    sock = os.path.join(procs.tmp, "proxy.sock")
    start_proxy(procs, [a, b], ["--listen", "unix:" + sock], wait_path=sock)
    client = redis.Redis(unix_socket_path=sock, decode_responses=True)
    # "a" is in slot 15495 (the second shard), "b" in 3300 (the first).
    client.set("a", "1")
    client.set("b", "2")
    stop(shard_b)
    with pytest.raises(redis.ResponseError):
        client.get("a")
    assert client.get("b") == "2"
    unix_redis(procs, "b")
    assert wait_for(lambda: _set_ok(client, "a", "3"), timeout=30), procs.log("proxy")
    assert client.get("a") == "3"
    assert redis.Redis(unix_socket_path=b, decode_responses=True).get("a") == "3"


def _set_ok(client, key, value):
    try:
        return client.set(key, value)
    except redis.ResponseError:
        return False


def test_unix_alone_has_no_tcp_listener(procs):
    _, a = unix_redis(procs, "a")
    sock = os.path.join(procs.tmp, "only.sock")
    start_proxy(procs, [a], ["--listen", "unix:" + sock], wait_path=sock)
    client = redis.Redis(unix_socket_path=sock, decode_responses=True)
    assert client.info("server")["tcp_port"] == 0
    assert client.config_get("port") == {"port": "0"}
    # The socket answers as soon as it is bound; the start-up line is logged just after.
    line = "listening on unix:%s with 2 workers" % sock
    assert wait_for(lambda: line in procs.log("proxy")), procs.log("proxy")
    assert not re.search(r"listening on [0-9.]+:", procs.log("proxy"))


def test_socket_files_stale_live_or_not_sockets(procs):
    _, a = unix_redis(procs, "a")
    binary = os.environ["SHARDPROXY_BIN"]
    # A socket file nobody listens on (a proxy killed with SIGKILL) is replaced.
    stale = os.path.join(procs.tmp, "stale.sock")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(stale)
    s.close()
    start_proxy(procs, [a], ["--listen", "unix:" + stale], name="proxy-stale", wait_path=stale)
    # One that answers is another process's: refused, and left alone.
    r = subprocess.run([binary, "--shards", a, "--listen", "unix:" + stale, "--metrics-listen",
                        "off"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 1, r
    assert "listen.unix %s is already in use" % stale in r.stderr, r.stderr
    assert answers(stale)
    # A file that is not a socket is never removed.
    plain = os.path.join(procs.tmp, "plain.sock")
    with open(plain, "w") as f:
        f.write("data")
    r = subprocess.run([binary, "--shards", a, "--listen", "unix:" + plain, "--metrics-listen",
                        "off"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 1, r
    assert "the file exists and is not a socket" in r.stderr, r.stderr
    assert open(plain).read() == "data"
    # No listener at all is a configuration error.
    r = subprocess.run([binary, "--shards", a, "--port", "0"], capture_output=True, text=True,
                       timeout=30)
    assert r.returncode == 2, r
    assert "listen.port: 0 turns the TCP listener off" in r.stderr, r.stderr


def test_a_nutcracker_pool_on_a_unix_socket(procs):
    """nutcracker.yml's "listen: /path mode" is served as nutcracker serves it, beside a TCP pool
    under the same supervisor."""
    _, shard = procs.redis("s0")
    sock = os.path.join(procs.tmp, "nutcracker.sock")
    port = free_port()
    path = os.path.join(procs.tmp, "nutcracker.yml")
    with open(path, "w") as f:
        f.write("local:\n  listen: %s 0600\n  redis: true\n  servers:\n    - 127.0.0.1:%d:1\n"
                "remote:\n  listen: 127.0.0.1:%d\n  redis: true\n  servers:\n"
                "    - 127.0.0.1:%d:1\n" % (sock, shard, port, shard))
    p = procs.spawn([os.environ["SHARDPROXY_BIN"], "--twemproxy-config", path, "--workers", "1",
                     "--metrics-listen", "off"], "supervisor")
    assert wait_for(lambda: answers(sock)), procs.log("supervisor")
    assert wait_for_port(port, p), procs.log("supervisor")
    assert stat.S_IMODE(os.stat(sock).st_mode) == 0o600
    redis.Redis(unix_socket_path=sock).set("k", "v")
    assert redis.Redis(port=port).get("k") == b"v"
    assert wait_for(lambda: "pool local: pid" in procs.log("supervisor")
                    and "serving unix:%s" % sock in procs.log("supervisor")), procs.log("supervisor")
    stop(p)
    assert p.returncode == 0, procs.log("supervisor")
    assert not os.path.exists(sock)
