"""limits.max_clients against the open-files limit, and what happens when descriptors run out.

Starts 2 redis-server shards and shardproxy (SHARDPROXY_BIN, 1 worker) under `prlimit --nofile=64:64`
on free loopback ports. The proxy must lower max_clients to what 64 descriptors leave room for,
say so at start-up and in INFO (and again on reload), refuse the clients past it with redis-server's
"-ERR max number of clients reached", and, when subscribers' shard connections use up the
descriptors before that, still answer new connections with the same error (counted, logged)
instead of resetting them, while the clients it has keep being served. Every process is stopped by
PID (sp_procs.Processes).
"""

import os
import re
import select
import shutil
import signal
import socket
import tempfile
import time

import pytest

from sp_procs import Processes, free_port, http_get, resp, stop, wait_for, wait_for_port

NOFILE = 64
MAX_CLIENTS_ERROR = b"-ERR max number of clients reached\r\n"


def connect(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.settimeout(5)
    return s


def ask(s, *args):
    """Sends one command and returns the bytes of one reply ("" when the peer went)."""
    try:
        s.sendall(resp(*args))
    except OSError:
        pass
    return read_reply(s)


def read_reply(s):
    data = b""
    while True:
        try:
            chunk = s.recv(65536)
        except (ConnectionResetError, socket.timeout):
            return data
        if not chunk:
            return data
        data += chunk
        if reply_end(data, 0) is not None:
            return data


def reply_end(data, at):
    """Offset just past the RESP2 reply starting at `at`, None while it is incomplete."""
    line_end = data.find(b"\r\n", at)
    if line_end < 0:
        return None
    kind, head = data[at:at + 1], data[at + 1:line_end]
    if kind in (b"+", b"-", b":"):
        return line_end + 2
    if kind == b"$":
        end = line_end + 2 + int(head) + 2
        return line_end + 2 if int(head) < 0 else (end if len(data) >= end else None)
    at = line_end + 2
    for _ in range(max(int(head), 0)):
        at = reply_end(data, at)
        if at is None:
            return None
    return at


def refused_at_once(s, wait=0.3):
    """True when the proxy greeted a fresh connection with the max-clients error unasked."""
    if not select.select([s], [], [], wait)[0]:
        return False
    return read_reply(s) == MAX_CLIENTS_ERROR


def closed_by_peer(s):
    try:
        return s.recv(100) == b""
    except ConnectionResetError:
        return True  # it had been sent a request the proxy never read


def serves(port):
    with connect(port) as s:
        return ask(s, "PING") == b"+PONG\r\n"


def wait_until_served(port, timeout=10):
    deadline = time.monotonic() + timeout
    while not serves(port) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert serves(port)


def info_field(port, section, field):
    with connect(port) as s:
        text = ask(s, "INFO", section).decode()
    m = re.search(r"^%s:(\S+)" % field, text, re.M)
    return m.group(1) if m else None


def metric(metrics, name):
    _, body = http_get("http://127.0.0.1:%d/metrics" % metrics)
    m = re.search(r"^%s (\S+)" % name, body, re.M)
    return float(m.group(1)) if m else 0.0


@pytest.fixture
def capped():
    binary = os.environ.get("SHARDPROXY_BIN")
    if not binary or not os.access(binary, os.X_OK):
        raise RuntimeError("SHARDPROXY_BIN must name the shardproxy binary")
    tmp = tempfile.mkdtemp(prefix="sp-fd-")
    procs = Processes(tmp)
    try:
        shard_ports = [procs.redis("shard%d" % i)[1] for i in range(2)]
        config = os.path.join(tmp, "proxy.yaml")
        with open(config, "w") as f:
            f.write("limits:\n  max_clients: 100000\n")
        for _ in range(5):
            port, metrics = free_port(), free_port()
            proxy = procs.spawn(
                ["/usr/bin/prlimit", "--nofile=%d:%d" % (NOFILE, NOFILE), binary,
                 "--config", config, "--listen", "127.0.0.1", "--port", str(port),
                 "--workers", "1",
                 "--shards", ",".join("127.0.0.1:%d" % p for p in shard_ports),
                 "--metrics-listen", "127.0.0.1:%d" % metrics, "--log-level", "info"],
                "proxy")
            if wait_for_port(port, proxy) and wait_for_port(metrics, proxy):
                break
            stop(proxy)
        else:
            raise RuntimeError("shardproxy did not start:\n" + procs.log("proxy"))
        yield {"proxy": proxy, "port": port, "metrics": metrics, "procs": procs,
               "config": config}
    finally:
        procs.close()
        shutil.rmtree(tmp, ignore_errors=True)


def effective_limit(log):
    m = re.search(r"start-up: limits\.max_clients 100000 needs \d+ file descriptors .* open-files "
                  r"limit is %d: at most (\d+) clients will be accepted" % NOFILE, log)
    assert m, log
    return int(m.group(1))


def test_max_clients_is_lowered_to_the_descriptor_limit(capped):
    port, procs = capped["port"], capped["procs"]
    limit = effective_limit(procs.log("proxy"))
    assert 0 < limit < NOFILE
    assert info_field(port, "clients", "maxclients") == str(limit)
    with connect(port) as s:
        assert ask(s, "CONFIG", "GET", "maxclients") == resp("maxclients", limit)

    clients = []
    try:
        for _ in range(limit):
            s = connect(port)
            assert ask(s, "PING") == b"+PONG\r\n"
            clients.append(s)
        # One more: refused the way redis-server refuses it, then closed.
        with connect(port) as extra:
            assert read_reply(extra) == MAX_CLIENTS_ERROR
            assert closed_by_peer(extra)
        for s in clients:
            assert ask(s, "PING") == b"+PONG\r\n"
    finally:
        for s in clients:
            s.close()
    wait_until_served(port)  # the proxy sees the closes a moment later
    assert int(info_field(port, "stats", "rejected_connections")) >= 1

    # Reload: a limit that fits is applied as it is, one that does not is lowered again.
    with open(capped["config"], "w") as f:
        f.write("limits:\n  max_clients: 5\n")
    os.kill(capped["proxy"].pid, signal.SIGHUP)
    deadline = time.monotonic() + 10
    while info_field(port, "clients", "maxclients") != "5" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert info_field(port, "clients", "maxclients") == "5"
    with open(capped["config"], "w") as f:
        f.write("limits:\n  max_clients: 1000\n")
    os.kill(capped["proxy"].pid, signal.SIGHUP)
    while info_field(port, "clients", "maxclients") != str(limit) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert info_field(port, "clients", "maxclients") == str(limit)
    assert re.search(r"reload \(SIGHUP\): limits\.max_clients 1000 needs", procs.log("proxy"))


def test_running_out_of_descriptors_answers_instead_of_resetting(capped):
    port, metrics, procs = capped["port"], capped["metrics"], capped["procs"]
    limit = effective_limit(procs.log("proxy"))
    plain = connect(port)
    assert ask(plain, "SET", "k", "v") == b"+OK\r\n"
    # Each PSUBSCRIBE client holds its own descriptor and one per shard: descriptors run out
    # before limits.max_clients is reached, and accept() fails with EMFILE.
    subscribers = []
    others = []  # a subscriber whose shard connection found no descriptor left
    refused = None
    try:
        for _ in range(limit):
            s = connect(port)
            # The refusal comes unasked; on a slow machine it may only show up as the answer.
            reply = MAX_CLIENTS_ERROR if refused_at_once(s) else ask(s, "PSUBSCRIBE", "p*")
            if reply == MAX_CLIENTS_ERROR:
                refused = s
                break
            (subscribers if reply.startswith(b"*3\r\n$10\r\npsubscribe\r\n") else others).append(s)
        assert refused is not None, "descriptors never ran out"
        assert len(subscribers) + len(others) + 1 < limit, "refused by max_clients, not EMFILE"
        assert closed_by_peer(refused)
        refused.close()
        # Again: the spare descriptor is back for the next refusal; no reset, no spin.
        for _ in range(3):
            with connect(port) as s:
                assert refused_at_once(s, wait=5)
                assert closed_by_peer(s)
        assert capped["proxy"].poll() is None
        # The clients it has are still served.
        assert ask(plain, "GET", "k") == b"$1\r\nv\r\n"
        assert int(ask(plain, "PUBLISH", "p1", "hello")[1:]) >= len(subscribers)
        for s in subscribers:
            assert read_reply(s).startswith(b"*4\r\n$8\r\npmessage\r\n")
    finally:
        for s in subscribers + others:
            s.close()
    # Descriptors free again: new clients are accepted, and the refusals were counted and logged.
    wait_until_served(port)
    assert metric(metrics, "shardproxy_client_accept_fd_exhausted_total") >= 4
    assert metric(metrics, "shardproxy_client_connections_rejected_total") >= 4
    assert int(info_field(port, "stats", "rejected_connections")) >= 4
    assert wait_for(lambda: "out of file descriptors" in procs.log("proxy")), procs.log("proxy")
    plain.close()
