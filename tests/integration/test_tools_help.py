"""Every script in tools/ answers --help (and -h) at once: it prints what it does and exits 0,
without installing, building or starting anything (a new user's first try must not start the
30-minute test suite)."""

import glob
import os
import subprocess
import time

import pytest

from sp_procs import REPO

SCRIPTS = sorted(glob.glob(os.path.join(REPO, "tools", "*.sh")) +
                 glob.glob(os.path.join(REPO, "tools", "*.py")))


@pytest.mark.parametrize("script", SCRIPTS, ids=os.path.basename)
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_script_answers_help(script, flag):
    argv = (["/usr/bin/python3", script] if script.endswith(".py") else [script]) + [flag]
    start = time.monotonic()
    out = subprocess.run(argv, capture_output=True, text=True, timeout=30, cwd=REPO)
    assert out.returncode == 0, out.stdout + out.stderr
    assert len(out.stdout.strip().splitlines()) >= 1, out
    assert time.monotonic() - start < 10, "--help must not do the script's work"


def test_every_script_is_covered():
    assert len(SCRIPTS) >= 15
