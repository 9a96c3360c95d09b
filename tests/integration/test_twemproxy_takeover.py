"""Taking over a twemproxy pool in place: nutcracker (Debian's, /usr/sbin/nutcracker) writes 20,000
keys over 4 redis-server shards, then shardproxy started from the very same nutcracker.yml
(--twemproxy-config) must read every one of them back, and the reverse: shardproxy writes,
nutcracker reads. Three pools: ketama + fnv1a_64, modula + murmur, and ketama + md5 over named,
weighted servers with a {} hash tag. A file with several pools is served whole, each pool by a
process of its own under a supervisor (signals passed on, a dead pool stops the set), or one pool
with --pool; redis_db must be 0, and the keys shardproxy takes another way are reported.

Every process (4 redis-server, nutcracker, shardproxy) runs on free loopback ports and is stopped
by PID (sp_procs.Processes).
"""

import os
import re
import signal
import socket
import subprocess

import pytest
import redis

from sp_procs import REPO, free_port, http_get, running, stop, wait_for, wait_for_port

NUTCRACKER = "/usr/sbin/nutcracker"
KEYS = 20000

pytestmark = pytest.mark.skipif(not os.access(NUTCRACKER, os.X_OK),
                                reason="nutcracker is not installed (tools/install-deps.sh)")


@pytest.fixture
def procs():
    with running() as p:
        yield p


def shards(procs, n=4):
    return [procs.redis("shard%d" % i)[1] for i in range(n)]


def pool_yaml(name, listen_port, settings, servers):
    merged = {"redis": "true", "auto_eject_hosts": "false", "preconnect": "true",
              "timeout": 2000}
    merged.update(settings)
    lines = ["%s:" % name, "  listen: 127.0.0.1:%d" % listen_port]
    lines += ["  %s: %s" % (k, v) for k, v in merged.items()]
    lines.append("  servers:")
    lines += ["   - %s" % s for s in servers]
    return "\n".join(lines) + "\n"


def write_config(procs, text):
    path = os.path.join(procs.tmp, "nutcracker.yml")
    with open(path, "w") as f:
        f.write(text)
    return path


def start_nutcracker(procs, path, port):
    check = subprocess.run([NUTCRACKER, "-t", "-c", path], capture_output=True, text=True,
                           timeout=30)
    assert check.returncode == 0, check.stdout + check.stderr
    p = procs.spawn([NUTCRACKER, "-c", path, "-s", str(free_port()), "-a", "127.0.0.1",
                     "-o", os.path.join(procs.tmp, "nutcracker.out")], "nutcracker")
    assert wait_for_port(port, p), procs.log("nutcracker")
    return p


def start_shardproxy(procs, path, extra=()):
    p = procs.spawn([os.environ["SHARDPROXY_BIN"], "--twemproxy-config", path, "--workers", "2",
                     "--metrics-listen", "off"] + list(extra), "shardproxy")
    return p


def keys():
    # Plain keys, hash-tagged ones and a few with high bytes.
    out = [b"key:%d" % i for i in range(KEYS - 2000)]
    out += [b"{user%d}:field%d" % (i % 300, i) for i in range(1500)]
    out += [bytes([0x80 + i % 120, 0x41 + i % 26]) + b":%d" % i for i in range(500)]
    return out


def value(k):
    return b"v-" + k


def write_all(port, ks):
    r = redis.Redis(port=port, socket_timeout=30)
    for start in range(0, len(ks), 500):
        pipe = r.pipeline(transaction=False)
        for k in ks[start:start + 500]:
            pipe.set(k, value(k))
        assert all(pipe.execute())


def read_all(port, ks):
    """(missing, wrong) counts of reading every key back through the proxy on port."""
    r = redis.Redis(port=port, socket_timeout=30)
    missing = wrong = 0
    for start in range(0, len(ks), 500):
        batch = ks[start:start + 500]
        pipe = r.pipeline(transaction=False)
        for k in batch:
            pipe.get(k)
        for k, v in zip(batch, pipe.execute()):
            missing += v is None
            wrong += v is not None and v != value(k)
    return missing, wrong


def flush(ports):
    for p in ports:
        redis.Redis(port=p).flushall()


def direct_counts(ports):
    return [redis.Redis(port=p).dbsize() for p in ports]


POOLS = {
    "ketama_fnv1a_64": ({"hash": "fnv1a_64", "distribution": "ketama"}, None),
    "modula_murmur": ({"hash": "murmur", "distribution": "modula"}, None),
    "named_weighted": ({"hash": "md5", "distribution": "ketama", "hash_tag": '"{}"'},
                       ["beta", "alpha", "delta", "gamma"]),
}


@pytest.mark.parametrize("pool", sorted(POOLS))
def test_both_directions_place_every_key_alike(procs, pool):
    settings, names = POOLS[pool]
    ports = shards(procs)
    if names:
        servers = ["127.0.0.1:%d:%d %s" % (p, w, n)
                   for p, w, n in zip(ports, [1, 2, 3, 4], names)]
    else:
        servers = ["127.0.0.1:%d:1" % p for p in ports]
    listen = free_port()
    path = write_config(procs, pool_yaml(pool, listen, settings, servers))
    ks = keys()

    # nutcracker writes, shardproxy reads.
    nut = start_nutcracker(procs, path, listen)
    write_all(listen, ks)
    stop(nut)
    counts = direct_counts(ports)
    assert sum(counts) == len(ks)
    assert min(counts) > 0, counts  # every shard holds keys: placement is exercised
    sp = start_shardproxy(procs, path)
    assert wait_for_port(listen, sp), procs.log("shardproxy")
    assert read_all(listen, ks) == (0, 0)
    # The operator's check before switching traffic agrees.
    check = subprocess.run(["/usr/bin/python3", os.path.join(REPO, "tools/check-placement.py"),
                            "--proxy", "127.0.0.1:%d" % listen,
                            "--shards", ",".join("127.0.0.1:%d" % p for p in ports)],
                           capture_output=True, text=True, timeout=120)
    assert check.returncode == 0 and "4000 keys sampled, 0 misplaced" in check.stdout, (
        check.stdout + check.stderr)

    # shardproxy writes, nutcracker reads.
    flush(ports)
    write_all(listen, ks)
    stop(sp)
    assert direct_counts(ports) == counts  # the same keys on the same shards
    nut = start_nutcracker(procs, path, listen)
    assert read_all(listen, ks) == (0, 0)
    stop(nut)


def test_multi_key_commands_follow_the_pool(procs):
    ports = shards(procs)
    listen = free_port()
    path = write_config(procs, pool_yaml("p", listen, {"hash": "fnv1a_64",
                                                      "distribution": "ketama",
                                                      "hash_tag": '"{}"'},
                                         ["127.0.0.1:%d:1" % p for p in ports]))
    sp = start_shardproxy(procs, path)
    assert wait_for_port(listen, sp), procs.log("shardproxy")
    r = redis.Redis(port=listen)
    pairs = {("k%d" % i): str(i) for i in range(200)}
    assert r.mset(pairs)  # split per shard
    assert r.mget(list(pairs)) == [v.encode() for v in pairs.values()]
    assert r.delete(*pairs) == 200
    # Same tag: one shard, so a non-split multi-key command runs.
    r.sadd("{u}:a", "x", "y")
    r.sadd("{u}:b", "y", "z")
    assert r.sinter("{u}:a", "{u}:b") == {b"y"}
    # Keys on different shards: refused with the shard wording.
    def holder(key):
        r.set(key, 1)
        return [i for i, p in enumerate(ports) if redis.Redis(port=p).exists(key)]

    # nutcracker's fnv1a_64 multiplies by 435 (its 64-bit prime cut to 32 bits): keys that differ
    # only in their last bytes stay on one shard, so the candidates differ in their first bytes.
    a = "s0"
    candidates = ["%d:probe" % (i * 1000003) for i in range(1, 200)]
    b = next((c for c in candidates if holder(c) != holder(a)), None)
    assert b is not None
    with pytest.raises(redis.ResponseError, match="don't hash to the same shard"):
        r.sinter(a, b)
    stop(sp)


def test_config_problems_are_reported(procs):
    ports = shards(procs, 2)
    servers = ["127.0.0.1:%d:1" % p for p in ports]
    two = pool_yaml("alpha", free_port(), {}, servers) + pool_yaml("beta", free_port(), {}, servers)
    path = write_config(procs, two)
    binary = os.environ["SHARDPROXY_BIN"]
    run = subprocess.run([binary, "--twemproxy-config", path, "--pool", "gamma"],
                         capture_output=True, text=True, timeout=30)
    assert run.returncode == 2 and "no pool 'gamma'" in run.stderr
    run = subprocess.run([binary, "--twemproxy-config", path, "--port", "1"],
                         capture_output=True, text=True, timeout=30)
    assert run.returncode == 2 and "each pool" in run.stderr

    bad_db = pool_yaml("p", free_port(), {"redis_db": 2}, servers)
    path = write_config(procs, bad_db)
    run = subprocess.run([binary, "--twemproxy-config", path], capture_output=True, text=True,
                         timeout=30)
    assert run.returncode != 0 and "redis_db" in run.stderr

    # One of two pools by name; auto_eject_hosts and backlog are reported, the proxy serves.
    listen = free_port()
    text = pool_yaml("alpha", free_port(), {}, servers) + pool_yaml(
        "beta", listen, {"auto_eject_hosts": "true", "backlog": 1024}, servers)
    path = write_config(procs, text)
    sp = start_shardproxy(procs, path, ["--pool", "beta"])
    assert wait_for_port(listen, sp), procs.log("shardproxy")
    assert redis.Redis(port=listen).set("k", "v")
    stop(sp)
    log = procs.log("shardproxy")
    assert "beta.auto_eject_hosts" in log and "never rehashed" in log
    assert "beta.backlog" in log
    assert "twemproxy ketama fnv1a_64" in log


def free_port_pair():
    """A free port p with p + 1 free too (pool i's metrics go on the base port plus i)."""
    for _ in range(50):
        p = free_port()
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", p + 1))
            except OSError:
                continue
        return p
    raise RuntimeError("no two adjacent free ports")


def test_every_pool_of_a_file_is_served_each_by_its_own_process(procs):
    ports = shards(procs)
    alpha, beta = free_port(), free_port()
    text = pool_yaml("alpha", alpha, {"hash": "fnv1a_64", "distribution": "ketama"},
                     ["127.0.0.1:%d:1" % p for p in ports[:2]])
    text += pool_yaml("beta", beta, {"hash": "murmur", "distribution": "modula"},
                      ["127.0.0.1:%d:1" % p for p in ports[2:]])
    path = write_config(procs, text)
    ks = keys()[:4000]
    nut = start_nutcracker(procs, path, alpha)
    assert wait_for_port(beta, nut)
    write_all(alpha, ks)
    write_all(beta, ks)
    stop(nut)

    metrics = free_port_pair()
    sp = start_shardproxy(procs, path, ["--metrics-listen", "127.0.0.1:%d" % metrics])
    assert wait_for_port(alpha, sp) and wait_for_port(beta, sp), procs.log("shardproxy")
    assert read_all(alpha, ks) == (0, 0)
    assert read_all(beta, ks) == (0, 0)
    for i in (0, 1):
        assert wait_for_port(metrics + i, sp)
        status, body = http_get("http://127.0.0.1:%d/metrics" % (metrics + i))
        assert status == 200 and "shardproxy_" in body

    # SIGHUP reaches both pools: each reloads its own pool from the file.
    os.kill(sp.pid, signal.SIGHUP)
    assert wait_for(lambda: procs.log("shardproxy").count("applied") >= 2), procs.log("shardproxy")

    # One pool's process dies: the supervisor stops the other and exits 1.
    log = procs.log("shardproxy")
    child = int(re.search(r"pool beta: pid (\d+)", log).group(1))
    os.kill(child, signal.SIGKILL)
    assert sp.wait(timeout=30) == 1
    assert not wait_for_port(alpha, timeout=0.5)
    assert "pool beta was killed" in procs.log("shardproxy")


def test_sigterm_stops_every_pool(procs):
    ports = shards(procs, 2)
    alpha, beta = free_port(), free_port()
    text = pool_yaml("alpha", alpha, {}, ["127.0.0.1:%d:1" % ports[0]])
    text += pool_yaml("beta", beta, {}, ["127.0.0.1:%d:1" % ports[1]])
    path = write_config(procs, text)
    sp = start_shardproxy(procs, path)
    assert wait_for_port(alpha, sp) and wait_for_port(beta, sp), procs.log("shardproxy")
    assert redis.Redis(port=beta).set("k", "v")
    log = procs.log("shardproxy")
    children = [int(p) for p in re.findall(r"pool \w+: pid (\d+)", log)]
    assert len(children) == 2
    os.kill(sp.pid, signal.SIGTERM)
    assert sp.wait(timeout=30) == 0
    for pid in children:
        assert not os.path.exists("/proc/%d" % pid) or open(
            "/proc/%d/stat" % pid).read().split()[2] == "Z"
    assert "every pool stopped" in procs.log("shardproxy")
