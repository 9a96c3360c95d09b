"""tools/quickstart.sh as a new user runs it, in the Release build under test (it configures its
build directory as Release, so sanitizer builds skip this): it prints the side-by-side table,
leaves nothing running, and with --keep the proxied shards hold only the keys of their own slots
(the direct comparison has a redis-server of its own).
"""

import os
import re
import subprocess
import sys
import tempfile

import pytest
import redis

import sp_procs
from sp_procs import REPO

sys.path.insert(0, os.path.join(REPO, "tests", "differential"))
from keyspace import key_slot  # noqa: E402  (Redis Cluster's CRC16 slot, with hash tags)


@pytest.fixture(scope="module")
def release_build():
    build = sp_procs.build_dir()
    with open(os.path.join(build, "CMakeCache.txt")) as f:
        cache = f.read()
    if not re.search(r"^CMAKE_BUILD_TYPE:\w+=Release$", cache, re.M) or \
            re.search(r"^SHARDPROXY_SANITIZE:\w+=\S", cache, re.M):
        pytest.skip("quickstart builds Release; this build is not one")
    return build


def quickstart(build, args, run_dir=None):
    env = dict(os.environ, SP_BUILD_DIR=build)
    if run_dir:
        env["SP_RUN_DIR"] = run_dir
    return subprocess.run([os.path.join(REPO, "tools", "quickstart.sh")] + args, env=env,
                          capture_output=True, text=True, timeout=900, cwd=REPO)


def test_prints_the_table_and_stops_everything(release_build):
    out = quickstart(release_build, ["-n", "5000"])
    assert out.returncode == 0, out.stdout + out.stderr
    for verb in ("SET", "GET"):
        m = re.search(r"^%s\s+([\d.]+) req/s\s+([\d.]+) req/s$" % verb, out.stdout, re.M)
        assert m, out.stdout
        assert float(m.group(1)) > 0 and float(m.group(2)) > 0
    assert "quickstart: build 100%" in out.stdout, out.stdout
    run_dir = re.search(r"shardproxy \(workers=1\) at 127.0.0.1:(\d+)", out.stdout)
    assert run_dir, out.stdout
    with pytest.raises(redis.ConnectionError):  # the proxy is gone
        redis.Redis(port=int(run_dir.group(1)), socket_timeout=2).ping()


def test_kept_shards_hold_only_their_own_slots(release_build):
    run_dir = tempfile.mkdtemp(prefix="sp-quickstart-")
    out = quickstart(release_build, ["--keep", "-n", "5000"], run_dir)
    try:
        assert out.returncode == 0, out.stdout + out.stderr
        total = 0
        for i in range(4):
            with open(os.path.join(run_dir, "shard%d.port" % i)) as f:
                port = int(f.read())
            first, last = i * 16384 // 4, (i + 1) * 16384 // 4 - 1
            keys = list(redis.Redis(port=port).scan_iter(count=1000))
            total += len(keys)
            foreign = [k for k in keys if not first <= key_slot(k) <= last]
            assert not foreign, (i, foreign[:5])
        assert total > 0
    finally:
        subprocess.run([os.path.join(REPO, "tools", "local-shards.sh"), "stop"],
                       env=dict(os.environ, SP_RUN_DIR=run_dir), timeout=60)
