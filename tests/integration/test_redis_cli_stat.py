"""redis-cli's monitoring modes against the proxy: `redis-cli --stat` (which reads INFO's keyspace,
used_memory, connected_clients, blocked_clients, total_commands_processed and
total_connections_received) prints real numbers, not the --9223372036854775808B it printed when
used_memory and blocked_clients were missing, and `redis-cli --latency` (PING after PING) reports
its min / max / avg / samples.

Starts 2 redis-server shards and shardproxy (SHARDPROXY_BIN, 2 workers) on free loopback ports;
every process is stopped by PID (sp_procs.Processes). redis-cli runs under `timeout`, its output
line-buffered through stdbuf so that what it printed before being stopped is kept.
"""

import re
import shutil
import subprocess
import tempfile
import time

import pytest

from sp_procs import Processes, resp

REDIS_CLI = shutil.which("redis-cli")
STDBUF = shutil.which("stdbuf")

pytestmark = pytest.mark.skipif(REDIS_CLI is None or STDBUF is None,
                                reason="redis-cli and stdbuf are needed")

# A --stat data row: keys, mem, clients, blocked, requests (+delta), connections.
STAT_ROW = re.compile(r"^(\d+)\s+(\d+(?:\.\d+)?[BKMGTP])\s+(\d+)\s+(\d+)\s+(\d+) \(\+(\d+)\)\s+(\d+)")


@pytest.fixture
def proxy():
    tmp = tempfile.mkdtemp(prefix="sp-cli-stat-")
    procs = Processes(tmp)
    try:
        shard_ports = [procs.redis("shard%d" % i)[1] for i in range(2)]
        _, port, _ = procs.proxy(shard_ports, workers=2)
        yield port, procs
    finally:
        procs.close()
        shutil.rmtree(tmp, ignore_errors=True)


def cli(port, *args, seconds):
    """redis-cli's output after `seconds` (stopped by `timeout` if still running)."""
    out = subprocess.run(["timeout", str(seconds), STDBUF, "-oL", REDIS_CLI, "-h", "127.0.0.1",
                          "-p", str(port)] + list(args),
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=seconds + 10)
    return out.stdout.decode(errors="replace")


def test_stat_prints_real_numbers(proxy):
    port, _ = proxy
    keys = 20
    cmd = subprocess.run([REDIS_CLI, "-p", str(port), "MSET"] +
                         [x for i in range(keys) for x in ("k%d" % i, "v")],
                         stdout=subprocess.PIPE, timeout=10)
    assert cmd.stdout.strip() == b"OK"
    # The keyspace comes from the shards' INFO, polled every 2 s.
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        info = subprocess.run([REDIS_CLI, "-p", str(port), "INFO", "keyspace"],
                              stdout=subprocess.PIPE, timeout=10).stdout.decode()
        if "db0:keys=%d," % keys in info:
            break
        time.sleep(0.1)
    out = cli(port, "--stat", "-i", "0.1", seconds=2)
    assert "-9223372036854775808" not in out, out
    lines = [line for line in out.splitlines() if line and line[0].isdigit()]
    rows = [m for m in (STAT_ROW.match(line) for line in lines) if m]
    assert len(rows) == len(lines), out  # every data row is all numbers
    assert len(rows) >= 3, out
    for m in rows:
        assert int(m.group(1)) == keys, out          # keys
        assert not m.group(2).startswith("0"), out   # mem: the shards' used_memory
        assert int(m.group(3)) >= 1, out             # clients: redis-cli itself
        assert int(m.group(4)) == 0, out             # blocked
        assert int(m.group(7)) >= 2, out             # connections received
    requests = [int(m.group(5)) for m in rows]
    assert requests == sorted(requests) and requests[-1] > requests[0], out
    assert all(int(m.group(6)) >= 1 for m in rows[1:]), out  # each INFO counts


def test_latency_reports_its_samples(proxy):
    port, _ = proxy
    # Not a terminal: redis-cli prints a "min max avg samples" line per PING and exits after a
    # second.
    out = cli(port, "--latency", seconds=8).strip()
    lines = out.splitlines()
    assert lines, out
    for line in lines:
        m = re.fullmatch(r"(\d+) (\d+) (\d+\.\d+) (\d+)", line)
        assert m, out
        low, high, avg = int(m.group(1)), int(m.group(2)), float(m.group(3))
        assert low <= avg <= high, out
    assert int(lines[-1].split()[3]) > 10, out  # samples
