"""tools/conn-memory.py: a small real run (300 connections, 2 redis-server shards, the proxy from
SHARDPROXY_BIN) prints one line per phase whose numbers parse and are plausible (an idle
connection costs at least the session it needs, and less than a buffer's worth); bad arguments
fail with a message; no process is left behind."""

import os
import re
import subprocess

from sp_procs import REPO

SCRIPT = os.path.join(REPO, "tools", "conn-memory.py")


def proxy_bin():
    binary = os.environ.get("SHARDPROXY_BIN")
    if not binary or not os.access(binary, os.X_OK):
        raise RuntimeError("SHARDPROXY_BIN must name the shardproxy binary")
    return binary


def run(*args):
    return subprocess.run(["/usr/bin/python3", SCRIPT, *args], capture_output=True, text=True,
                          timeout=300, cwd=REPO)


def test_a_small_run_prints_every_phase():
    out = run("--bin", proxy_bin(), "--connections", "300", "--pipeline", "3")
    assert out.returncode == 0, out.stdout + out.stderr
    rows = {}
    for line in out.stdout.splitlines():
        m = re.match(r"^(\S.*?)\s+(\d+)\s+(-?\d+)\s*$", line)
        if m:
            rows[m.group(1).strip()] = (int(m.group(2)), int(m.group(3)))
    assert set(rows) >= {"idle", "1 request each, all in flight at once",
                         "3 pipelined requests each"}, out.stdout
    idle_per_connection = rows["idle"][1]
    assert idle_per_connection > 0, out.stdout
    if not os.environ.get("SHARDPROXY_SANITIZE"):  # sanitizers add shadow memory per allocation
        # The session alone is several hundred bytes; a connection holding a 4 KiB buffer while
        # idle would show here. RSS moves in pages, so 300 connections leave some slack.
        assert 300 <= idle_per_connection <= 3000, out.stdout
    assert "command: tools/conn-memory.py --bin" in out.stdout


def test_bad_arguments_fail_with_a_message():
    out = run("--bin", proxy_bin(), "--connections", "0")
    assert out.returncode == 1
    assert "must be at least 1" in out.stderr
    out = run("--bin", "/nonexistent/shardproxy")
    assert out.returncode == 1
    assert "no executable shardproxy" in out.stderr
