"""tools/trace-connections.sh at a small scale: it starts its shards and shardproxy, counts the
kernel's work per request at two connection counts from tracepoints, prints a row per event with
real numbers (system calls and io_uring completions above zero), and stops everything it
started. Skipped where perf cannot read tracepoints."""

import os
import re
import shutil
import subprocess

import pytest

from sp_procs import REPO


def perf_reads_tracepoints():
    if shutil.which("perf") is None:
        return False
    probe = subprocess.run(["perf", "stat", "-e", "raw_syscalls:sys_enter", "true"],
                           capture_output=True, text=True, timeout=30)
    return probe.returncode == 0


@pytest.mark.skipif(not perf_reads_tracepoints(), reason="perf cannot read tracepoints here")
def test_small_run_counts_the_kernels_work_per_request():
    env = dict(os.environ)
    out = subprocess.run(
        [os.path.join(REPO, "tools", "trace-connections.sh"), "--connections", "20,60", "-n",
         "4000", "--bin", env["SHARDPROXY_BIN"]],
        capture_output=True, text=True, timeout=240, cwd=REPO, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    rows = dict(re.findall(r"^\| ([^|]+?) \| ([-0-9.]+) \| [-0-9.]+ \|$", out.stdout, re.M))
    for event in ("raw_syscalls:sys_enter", "io_uring:io_uring_complete",
                  "receives out of buffers (-ENOBUFS)"):
        assert event in rows, out.stdout
    assert float(rows["raw_syscalls:sys_enter"]) > 0, out.stdout
    if "socket_read_api:io_uring" in out.stdout:
        # Reads go through the ring: at least one completion per request (its receive).
        assert float(rows["io_uring:io_uring_complete"]) >= 1.0, out.stdout
    else:
        assert "socket_read_api:libuv" in out.stdout, out.stdout
    left = subprocess.run(["pgrep", "-af", "shardproxy-trace[.]"], capture_output=True, text=True)
    assert left.stdout == "", left.stdout
