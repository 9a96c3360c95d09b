"""tools/profile.sh: --help answers at once without starting anything, and a tiny real strace run
(2 redis-server shards, the proxy from SHARDPROXY_BIN, one client, 2,000 -> 4,000 requests of
each test) prints a table whose lines parse, with a plausible number of system calls per request.
One client, because with many a loop turn carries many requests and so few system calls that two
tiny runs' difference is noise. The callgrind mode is left out to keep the test short; the script
stops every process it starts."""

import os
import re
import shutil
import subprocess

import pytest

from sp_procs import REPO

SCRIPT = os.path.join(REPO, "tools", "profile.sh")


def test_help_exits_zero_and_describes_options():
    out = subprocess.run([SCRIPT, "--help"], capture_output=True, text=True, timeout=30, cwd=REPO)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "--pipeline" in out.stdout
    assert "--requests" in out.stdout


def test_unknown_option_fails():
    out = subprocess.run([SCRIPT, "--no-such-option"], capture_output=True, text=True,
                         timeout=30, cwd=REPO)
    assert out.returncode != 0
    assert "unknown option" in out.stderr


@pytest.mark.skipif(not all(shutil.which(t) for t in ("strace", "redis-server", "redis-cli",
                                                      "redis-benchmark")),
                    reason="strace and redis-server/-cli/-benchmark are needed")
def test_strace_run_prints_a_table():
    binary = os.environ.get("SHARDPROXY_BIN")
    if not binary or not os.access(binary, os.X_OK):
        raise RuntimeError("SHARDPROXY_BIN must name the shardproxy binary")
    out = subprocess.run([SCRIPT, "--bin", binary, "--mode", "st", "--requests", "2000,4000",
                          "--shards", "2", "--clients", "1"],
                         capture_output=True, text=True, timeout=120, cwd=REPO)
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    load = [line for line in lines if line.startswith("load: ")]
    assert len(load) == 1, out.stdout
    assert re.match(r"load: 2 shards, 1 worker, -P 1, -c 1, -d 256, set,get; "
                    r"N 2000 -> 4000 \(requests 4000 -> 8000\)", load[0]), load[0]
    syscalls = [line for line in lines if line.startswith("syscalls/request")]
    assert len(syscalls) == 1, out.stdout
    m = re.match(r"syscalls/request\s+(\d+(?:\.\d+)?)\s+(.*)\(repeats: ([0-9. ]+)\)$", syscalls[0])
    assert m, syscalls[0]
    per_request = float(m.group(1))
    assert 0 < per_request < 20, syscalls[0]
    # The breakdown: "name value" pairs, none above the total. A worker that reads and writes
    # through its ring makes its reads and writes inside io_uring_enter; without one, the reads
    # and the writes to the shards and the clients are their own calls.
    pairs = re.findall(r"(\w+) (-?\d+(?:\.\d+)?)", m.group(2))
    names = {name for name, _ in pairs}
    if "io_uring_enter" not in names:
        assert {"write", "writev", "sendto"} & names, syscalls[0]
        assert {"read", "readv"} & names, syscalls[0]
    assert all(float(v) <= per_request for _, v in pairs), syscalls[0]
    assert not any(line.startswith("instructions/request") for line in lines), out.stdout
    assert any(line.strip().startswith("load:    redis-benchmark") for line in lines), out.stdout
