"""tools/bench-connections.sh at a small scale: it starts its shards, shardproxy and twemproxy,
drives both proxies at two connection counts, prints a CPU and RSS row for each proxy and count
and a ratio line per proxy with real numbers, and stops everything it started."""

import os
import re
import subprocess

from sp_procs import REPO


def test_small_run_prints_both_counts_for_both_proxies():
    env = dict(os.environ)
    out = subprocess.run(
        [os.path.join(REPO, "tools", "bench-connections.sh"), "-r", "1", "--connections",
         "20,60", "-n", "10000", "--bin", env["SHARDPROXY_BIN"]],
        capture_output=True, text=True, timeout=240, cwd=REPO, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    for proxy in ("shardproxy", "twemproxy"):
        for conns in (20, 60):
            row = re.search(r"^\| %s \| %d \| ([0-9.]+) \(.*\) \| ([0-9.]+) \(" % (proxy, conns),
                            out.stdout, re.M)
            assert row, out.stdout
            assert float(row.group(1)) > 0 and float(row.group(2)) > 0, row.group(0)
        ratio = re.search(r"^CPU per request, %s at 60 over 20 connections: ([0-9.]+) " % proxy,
                          out.stdout, re.M)
        assert ratio and float(ratio.group(1)) > 0, out.stdout
    # Nothing it started is left behind: no process names its run directory.
    left = subprocess.run(["pgrep", "-af", "shardproxy-conns[.]"], capture_output=True, text=True)
    assert left.stdout == "", left.stdout
