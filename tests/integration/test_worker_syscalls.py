"""tools/worker-syscalls.py at a small scale: it starts shards and shardproxy with one and with
two workers, places one closed-loop client on each worker, counts the proxy's system calls per
request under strace, prints a row per worker count with real numbers, and stops everything it
started."""

import os
import re
import subprocess

from sp_procs import REPO


def test_small_run_prints_a_row_per_worker_count():
    env = dict(os.environ)
    out = subprocess.run(
        ["/usr/bin/python3", os.path.join(REPO, "tools", "worker-syscalls.py"), "--workers",
         "1,2", "--requests", "40,120", "--repeat", "1", "--bin", env["SHARDPROXY_BIN"]],
        capture_output=True, text=True, timeout=240, cwd=REPO, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    rows = re.findall(r"^\| (\d) \| (\d) \| ([0-9.]+) \(", out.stdout, re.M)
    assert [(w, c) for w, c, _ in rows] == [("1", "1"), ("2", "2")], out.stdout
    for _, _, calls in rows:
        # A request costs at least one system call in the proxy whichever way it reads.
        assert float(calls) >= 1.0, out.stdout
    left = subprocess.run(["pgrep", "-af", "worker-syscalls[.]"], capture_output=True, text=True)
    assert left.stdout == "", left.stdout
