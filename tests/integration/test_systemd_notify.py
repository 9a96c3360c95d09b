"""The systemd service protocol as a Type=notify unit with WatchdogSec= sees it, without systemd:
the test listens on a datagram socket named by NOTIFY_SOCKET (and sets WATCHDOG_USEC), as the
service manager does, and checks what shardproxy sends: READY=1 with a STATUS once it serves,
WATCHDOG=1 keep-alives at half the period, RELOADING=1 then READY=1 around a SIGHUP reload, and
STOPPING=1 on SIGTERM. Without NOTIFY_SOCKET nothing is sent (the other tests run that way).

Starts a redis-server shard and shardproxy (SHARDPROXY_BIN) on free loopback ports; every process
is stopped by PID (sp_procs.Processes).
"""

import os
import signal
import socket
import tempfile
import time

import pytest

from sp_procs import Processes, free_port, wait_for_port


@pytest.fixture
def procs():
    p = Processes(tempfile.mkdtemp(prefix="sp-notify-"))
    yield p
    p.close()


def receive_until(sock, predicate, timeout=10.0):
    """Messages (dicts of KEY=VALUE) received until one satisfies predicate; all of them."""
    got = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            data = sock.recv(4096).decode()
        except socket.timeout:
            break
        msg = dict(line.split("=", 1) for line in data.splitlines() if "=" in line)
        got.append(msg)
        if predicate(msg):
            return got
    raise AssertionError("no such message; received %r" % got)


def test_ready_watchdog_reload_and_stopping(procs):
    _, shard = procs.redis("s0")
    path = os.path.join(procs.tmp, "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    port = free_port()
    env = dict(os.environ, NOTIFY_SOCKET=path, WATCHDOG_USEC="400000")
    saved = os.environ.copy()
    os.environ.update(env)
    try:
        proxy = procs.spawn([os.environ["SHARDPROXY_BIN"], "--port", str(port), "--workers", "2",
                             "--shards", "127.0.0.1:%d" % shard, "--metrics-listen", "off"],
                            "proxy")
    finally:
        os.environ.clear()
        os.environ.update(saved)
    try:
        got = receive_until(sock, lambda m: m.get("READY") == "1")
        ready = got[-1]
        assert ready["STATUS"] == "serving on 127.0.0.1:%d with 2 workers" % port, got
        assert wait_for_port(port, proxy)  # READY=1 means it accepts clients

        # Keep-alives at half of WATCHDOG_USEC (200 ms): at least 4 in a second.
        start = time.monotonic()
        beats = 0
        while time.monotonic() - start < 1.0:
            beats += sum(1 for m in receive_until(sock, lambda m: "WATCHDOG" in m)
                         if m.get("WATCHDOG") == "1")
        assert beats >= 4, beats

        os.kill(proxy.pid, signal.SIGHUP)
        got = receive_until(sock, lambda m: m.get("RELOADING") == "1")
        got = receive_until(sock, lambda m: m.get("READY") == "1")
        assert got[-1]["STATUS"].startswith("serving on"), got

        os.kill(proxy.pid, signal.SIGTERM)
        receive_until(sock, lambda m: m.get("STOPPING") == "1")
        assert proxy.wait(timeout=30) == 0
    finally:
        sock.close()
