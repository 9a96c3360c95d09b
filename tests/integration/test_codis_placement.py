"""Codis placement with real shards: a Codis product's configuration dump (the JSON that
`codis-admin --config-dump` prints: 4 groups owning uneven, interleaved slot ranges, one group
with a replica, one spare group with no slots) is given to shardproxy as placement.codis_dump.
Keys written through the proxy must land exactly where crc32(key or its {tag}) % 1024 and the
dump's slot table say, computed here independently with zlib; keys placed directly that way must
all read back through the proxy; and the same table written as YAML slot ranges places alike.

4 redis-server shards (plus a replica) and shardproxy run on free loopback ports and are stopped
by PID (sp_procs.Processes).
"""

import json
import os
import subprocess
import zlib

import pytest
import redis

from sp_procs import running, free_port, wait_for_port

# (first slot, last slot, group id): uneven and out of group order.
TABLE = [(0, 99, 2), (100, 611, 1), (612, 700, 4), (701, 1000, 3), (1001, 1023, 2)]


@pytest.fixture
def procs():
    with running() as p:
        yield p


def codis_slot(key):
    """Codis's rule: CRC-32 (IEEE) of the bytes between the first '{' and the next '}' (even when
    empty), else of the whole key, modulo 1024."""
    start = key.find(b"{")
    if start >= 0:
        end = key.find(b"}", start + 1)
        if end >= 0:
            key = key[start + 1:end]
    return zlib.crc32(key) % 1024


def group_of(slot):
    return next(g for first, last, g in TABLE if first <= slot <= last)


def dump(ports, replica_port):
    groups = [{"id": g, "servers": [{"server": "127.0.0.1:%d" % ports[g - 1], "datacenter": "",
                                     "action": {}, "replica_group": False}],
               "promoting": {}, "out_of_sync": False} for g in (1, 2, 3, 4)]
    groups[2]["servers"].append({"server": "127.0.0.1:%d" % replica_port, "datacenter": "",
                                 "action": {}, "replica_group": False})
    groups.append({"id": 9, "servers": [], "promoting": {}, "out_of_sync": False})  # spare
    slots = [{"id": s, "group_id": group_of(s), "action": {}} for s in range(1024)]
    return {"slots": slots, "group": groups,
            "proxy": [{"id": 1, "token": "t", "proxy_addr": "127.0.0.1:19000"}]}


def keys():
    out = [b"key:%d" % i for i in range(8000)]
    out += [b"{tag%d}:%d" % (i % 50, i) for i in range(1000)]
    out += [b"a{}b%d" % i for i in range(10)]  # Codis hashes the empty tag
    return out


def start(procs, config_text):
    path = os.path.join(procs.tmp, "proxy.yaml")
    with open(path, "w") as f:
        f.write(config_text)
    port = free_port()
    proc = procs.spawn([os.environ["SHARDPROXY_BIN"], "--config", path, "--port", str(port),
                        "--workers", "2", "--metrics-listen", "off"], "proxy")
    assert wait_for_port(port, proc), procs.log("proxy")
    return proc, port


def check_placement(ports, ks):
    r = [redis.Redis(port=p) for p in ports]
    wrong = 0
    for k in ks:
        expected = group_of(codis_slot(k)) - 1
        wrong += r[expected].get(k) != b"v" + k
    return wrong


def test_keys_land_where_crc32_and_the_dump_say(procs):
    ports = [procs.redis("group%d" % g)[1] for g in (1, 2, 3, 4)]
    _, replica_port = procs.redis("replica3")
    redis.Redis(port=replica_port).replicaof("127.0.0.1", ports[2])
    path = os.path.join(procs.tmp, "codis.json")
    with open(path, "w") as f:
        json.dump(dump(ports, replica_port), f)
    _, port = start(procs, "placement:\n  kind: codis\n  codis_dump: %s\n" % path)
    proxy = redis.Redis(port=port, socket_timeout=30)
    ks = keys()
    pipe = proxy.pipeline(transaction=False)
    for k in ks:
        pipe.set(k, b"v" + k)
    assert all(pipe.execute())
    assert check_placement(ports, ks) == 0
    assert [redis.Redis(port=p).dbsize() for p in ports] == [
        sum(1 for k in ks if group_of(codis_slot(k)) == g) for g in (1, 2, 3, 4)]

    # Placed directly by the rule, read through the proxy; MGET splits across groups.
    for k in ks[:2000]:
        redis.Redis(port=ports[group_of(codis_slot(k)) - 1]).set(k, b"direct")
    assert proxy.mget(ks[:2000]) == [b"direct"] * 2000
    # Same tag, one slot: a transaction on one group.
    with proxy.pipeline(transaction=True) as tx:
        tx.incr("{t}:a").incr("{t}:b")
        assert tx.execute() == [1, 1]
    # Keys of two Codis slots: CROSSSLOT, as redis-server in cluster mode says it.
    other = next(b"{y%d}" % i for i in range(100) if codis_slot(b"y%d" % i) != codis_slot(b"x"))
    with pytest.raises(redis.ResponseError, match="don't hash to the same slot"):
        proxy.sunion(b"{x}1", other + b"2")


def test_yaml_slot_ranges_place_alike(procs):
    ports = [procs.redis("group%d" % g)[1] for g in (1, 2, 3, 4)]
    lines = ["placement:", "  kind: codis", "shards:"]
    for g in (1, 2, 3, 4):
        ranges = ", ".join("%d-%d" % (a, b) for a, b, owner in TABLE if owner == g)
        lines.append("  - {name: group%d, address: \"127.0.0.1:%d\", slots: [%s]}"
                     % (g, ports[g - 1], ranges))
    _, port = start(procs, "\n".join(lines) + "\n")
    proxy = redis.Redis(port=port, socket_timeout=30)
    ks = keys()[:3000]
    pipe = proxy.pipeline(transaction=False)
    for k in ks:
        pipe.set(k, b"v" + k)
    assert all(pipe.execute())
    assert check_placement(ports, ks) == 0


def test_a_migrating_slot_or_an_unassigned_one_is_refused(procs, tmp_path):
    ports = [procs.redis("g%d" % g)[1] for g in (1, 2)]
    table = dump(ports + ports, ports[0])
    table["slots"][5]["action"] = {"index": 1, "state": "migrating", "target_id": 1}
    table["slots"][6]["group_id"] = 0
    path = tmp_path / "codis.json"
    path.write_text(json.dumps(table))
    cfg = tmp_path / "proxy.yaml"
    cfg.write_text("placement:\n  kind: codis\n  codis_dump: %s\n" % path)
    run = subprocess.run([os.environ["SHARDPROXY_BIN"], "--check-config", str(cfg)],
                         capture_output=True, text=True, timeout=30)
    assert run.returncode != 0
    assert "slots[5]" in run.stderr and "migrat" in run.stderr
    assert "slots[6]" in run.stderr and "no group" in run.stderr
