"""tools/bench-targets.py --quick: the one command that measures every per-request cost target
runs each of its tools at a tiny scale, prints a row per target (and the RESP3 and TLS rows
reported beside them) with real figures, marks the verdicts as a quick run's, and keeps each
tool's output where --logs says (each tool's own test checks that it stops what it starts). Release builds only: it times and counts a binary, and a sanitizer build is neither what
users run nor something valgrind can load."""

import os
import re
import subprocess

import pytest

from sp_procs import REPO


@pytest.mark.skipif(os.environ.get("SHARDPROXY_SANITIZE", "") not in ("", "OFF", "none"),
                    reason="measures a Release binary")
def test_quick_run_prints_every_target(tmp_path):
    env = dict(os.environ)
    logs = tmp_path / "logs"
    out = subprocess.run(
        ["/usr/bin/python3", os.path.join(REPO, "tools", "bench-targets.py"), "--quick", "--bin",
         env["SHARDPROXY_BIN"], "--logs", str(logs)],
        capture_output=True, text=True, timeout=500, cwd=REPO, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    rows = re.findall(r"^\| (.+?) \| (.+?) \| (.+?) \| (.+?) \|$", out.stdout, re.M)
    targets = [r for r in rows if r[0] != "target"]
    assert len(targets) == 12, out.stdout
    for target, _, measured, verdict in targets:
        assert re.search(r"[0-9]", measured), (target, measured)
        if "no bar" not in target:
            assert verdict == "(quick run: not a measurement)", (target, verdict)
    for tool in ("bench-peers", "profile-st-c50", "profile-cg-w2", "profile-resp3",
                 "worker-syscalls", "bench-connections", "conn-memory", "bench-tls"):
        assert (logs / (tool + ".log")).is_file(), tool
