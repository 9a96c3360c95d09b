#!/usr/bin/python3
"""Record where real twemproxy (nutcracker) places keys, as a reference for our re-implementation.

The unit tests of shardproxy's twemproxy-compatible routing (modula and ketama distributions, the
12 nutcracker hash functions, hash tags, server weights and names) compare their answers with
placements made by the real thing, recorded here once and committed as
tests/unit/route/data/twemproxy_placement.json.

How: 16 redis-server processes and one nutcracker run on free loopback ports, in a temp dir.
One nutcracker.yml holds one pool per case (every hash with modula over 16, 13, 11, 9 and 7
unit-weight servers, modula over weights 1,2,3,4, ketama over 4 unnamed servers and ketama over 4
named servers of weights 1,2,3,4, plus three hash-tag cases). For each case every redis server is
flushed, a fixed list of 200 keys is SET through the case's pool, and each key is looked up on the
pool's servers directly; the index of the server holding it (in the order the pool lists its
servers in nutcracker.yml) is its placement. Every key must be on exactly one server.

Things a reader of the data must know about nutcracker 0.5.0:
  * It sorts a pool's servers by name (shorter name first, then bytewise) before it builds the
    modula or ketama continuum; the name is the "name" field when given, else "host:port".
    Indexes in the data are in listed order, so a re-implementation has to sort the same way.
  * Unnamed ketama servers hash "host:port", so those cases depend on the ports used when
    recording; they are kept in the server names. To keep modula cases independent of the ports,
    the servers are listed in a fixed permutation of ascending port order.

--check records again into memory and compares with the committed file (placements only);
unnamed-ketama cases are compared only when the recorded redis ports are free to reuse.
Every process started here is stopped by its PID at the end, also on errors.
"""

import argparse
import json
import os
import random
import re
import resource
import socket
import subprocess
import sys
import tempfile
import time

import redis

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUT = os.path.join(ROOT, "tests", "unit", "route", "data", "twemproxy_placement.json")
GENERATOR = "tools/record-twemproxy-placement.py"

HASHES = ["one_at_a_time", "md5", "crc16", "crc32", "crc32a", "fnv1_32", "fnv1a_32", "fnv1_64",
          "fnv1a_64", "hsieh", "murmur", "jenkins"]
MODULA_SIZES = [16, 13, 11, 9, 7]
WEIGHTS = [1, 2, 3, 4]
NAMES = ["alpha", "beta", "gamma", "delta"]
NREDIS = 16
# Position in nutcracker.yml of the server with the i-th lowest port: a fixed shuffle, so that
# listed order differs from nutcracker's sorted order the same way on every run.
PORT_ORDER_SEED = 20240611
WAIT_S = 10.0


# ---------------------------------------------------------------------------------------------
# Keys and cases


def ascii_keys() -> list:
    keys = [f"key:{i}" for i in range(110)]
    keys += [f"user:{1000 + i}:profile" for i in range(10)]
    return [k.encode() for k in keys]


def tag_keys() -> list:
    return [b"{user1}:a", b"{user1}:b", b"a{}b", b"{}", b"{", b"}{x}",
            b"$tag$rest", b"x$tag$y", b"$$ab", b"$tag$other"]


def length_keys() -> list:
    """One key of every length 1..40, so hash tails of every length are covered."""
    return [bytes(ord("a") + (i * 7 + n) % 26 for i in range(n)) for n in range(1, 41)]


def binary_keys(taken: set) -> list:
    """30 keys of bytes 1..255, lengths 1..24, each with at least one byte in 0x80..0xff."""
    rng = random.Random(12345)
    keys = []
    for _ in range(1000):
        if len(keys) == 30:
            break
        data = bytearray(rng.randint(1, 255) for _ in range(rng.randint(1, 24)))
        if max(data) < 0x80:
            data[rng.randrange(len(data))] = rng.randint(0x80, 0xFF)
        key = bytes(data)
        if key not in taken:
            taken.add(key)
            keys.append(key)
    if len(keys) != 30:
        raise SystemExit("could not make 30 distinct binary keys")
    return keys


def make_keys() -> list:
    keys = ascii_keys() + tag_keys() + length_keys()
    keys += binary_keys(set(keys))
    if len(keys) != 200 or len(set(keys)) != 200 or min(map(len, keys)) == 0:
        raise SystemExit(f"key list is wrong: {len(keys)} keys, {len(set(keys))} distinct")
    return keys


def server_entry(port: int, weight: int, name: str = "") -> dict:
    """A server as the data file records it; name is what nutcracker hashes for ketama."""
    return {"name": name or f"127.0.0.1:{port}", "weight": weight, "named": bool(name),
            "port": port}


def make_cases(ports: list) -> list:
    """Every case, in file order; ports are the redis servers in listed order."""
    unit = lambda n: [server_entry(p, 1) for p in ports[:n]]
    weighted = [server_entry(p, w) for p, w in zip(ports, WEIGHTS)]
    named = [server_entry(p, w, nm) for p, w, nm in zip(ports, WEIGHTS, NAMES)]
    case = lambda dist, h, servers, tag="": {"distribution": dist, "hash": h, "hash_tag": tag,
                                             "servers": servers}
    cases = []
    for h in HASHES:
        cases += [case("modula", h, unit(n)) for n in MODULA_SIZES]
        cases.append(case("modula", h, weighted))
        cases.append(case("ketama", h, unit(4)))
        cases.append(case("ketama", h, named))
    cases.append(case("ketama", "fnv1a_64", named, "{}"))
    cases.append(case("modula", "murmur", unit(13), "$$"))
    cases.append(case("modula", "crc32a", unit(11), "{}"))
    return cases


def port_dependent(case: dict) -> bool:
    """Unnamed ketama servers hash "127.0.0.1:PORT": the placement depends on the ports."""
    return case["distribution"] == "ketama" and not all(s["named"] for s in case["servers"])


# ---------------------------------------------------------------------------------------------
# Processes


def free_ports(count: int) -> list:
    """count distinct free loopback ports (all held open until all are found)."""
    socks = []
    try:
        for _ in range(count):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def port_is_free(port: int) -> bool:
    """Whether redis-server could listen there (it sets SO_REUSEADDR, so TIME_WAIT is fine)."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def listed_order(ports: list) -> list:
    """Ports in ascending order, then moved to their fixed listed positions."""
    ascending = sorted(ports)
    slots = list(range(len(ascending)))
    random.Random(PORT_ORDER_SEED).shuffle(slots)
    listed = [0] * len(ascending)
    for rank, slot in enumerate(slots):
        listed[slot] = ascending[rank]
    return listed


def wait_for_port(port: int, proc: subprocess.Popen, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"{what} exited early with status {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"{what} does not accept connections on port {port} after {WAIT_S}s")


def start_redis(binary: str, port: int, tmp: str) -> subprocess.Popen:
    workdir = os.path.join(tmp, f"redis-{port}")
    os.makedirs(workdir)
    log = open(os.path.join(workdir, "redis.log"), "wb")
    args = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly",
            "no", "--daemonize", "no"]
    return subprocess.Popen(args, cwd=workdir, stdin=subprocess.DEVNULL, stdout=log,
                            stderr=subprocess.STDOUT)


def stop(procs: list) -> None:
    """Stops every process started here, by its PID, with a bounded wait."""
    for proc in procs:
        if proc.poll() is None:
            proc.terminate()
    for proc in procs:
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


def nutcracker_version(binary: str) -> str:
    out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=10)
    text = out.stdout + out.stderr
    match = re.search(r"nutcracker-(\S+)", text)
    return match.group(1) if match else text.strip().splitlines()[0]


def yaml_pool(index: int, case: dict, listen: int) -> str:
    lines = [f"case{index:03d}:",
             f"  listen: 127.0.0.1:{listen}",
             f"  hash: {case['hash']}",
             f"  distribution: {case['distribution']}"]
    if case["hash_tag"]:
        lines.append(f"  hash_tag: \"{case['hash_tag']}\"")
    lines += ["  redis: true", "  auto_eject_hosts: false", "  preconnect: false",
              "  timeout: 2000", "  servers:"]
    for s in case["servers"]:
        name = f" {s['name']}" if s["named"] else ""
        lines.append(f"   - 127.0.0.1:{s['port']}:{s['weight']}{name}")
    return "\n".join(lines) + "\n"


def start_nutcracker(binary: str, cases: list, listens: list, stats: int,
                     tmp: str) -> subprocess.Popen:
    conf = os.path.join(tmp, "nutcracker.yml")
    with open(conf, "w") as f:
        f.write("".join(yaml_pool(i, c, p) for i, (c, p) in enumerate(zip(cases, listens))))
    test = subprocess.run([binary, "-t", "-c", conf], capture_output=True, text=True, timeout=30)
    if test.returncode != 0:
        raise SystemExit(f"nutcracker rejects {conf}:\n{test.stdout}{test.stderr}")
    args = [binary, "-c", conf, "-o", os.path.join(tmp, "nutcracker.log"),
            "-p", os.path.join(tmp, "nutcracker.pid"), "-s", str(stats), "-a", "127.0.0.1"]
    return subprocess.Popen(args, cwd=tmp, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def raise_fd_limit() -> None:
    """nutcracker keeps ~850 server connections open across all pools."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 8192 if hard == resource.RLIM_INFINITY else min(hard, 8192)
    if soft != resource.RLIM_INFINITY and soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))


# ---------------------------------------------------------------------------------------------
# Recording


def client(port: int) -> redis.Redis:
    return redis.Redis(host="127.0.0.1", port=port, socket_timeout=5, socket_connect_timeout=5)


def record_case(case: dict, listen: int, backends: dict, keys: list) -> list:
    """Flushes every server, SETs every key through the pool, returns the placement."""
    for conn in backends.values():
        conn.flushall()
    proxy = client(listen)
    try:
        pipe = proxy.pipeline(transaction=False)
        for key in keys:
            pipe.set(key, b"1")
        replies = pipe.execute(raise_on_error=False)
    finally:
        proxy.close()
    refused = [(k, r) for k, r in zip(keys, replies) if r is not True]
    if refused:
        raise SystemExit(f"nutcracker refused {len(refused)} SETs, first: {refused[0]!r}")
    where = {}
    for index, s in enumerate(case["servers"]):
        for key in backends[s["port"]].keys("*"):
            if key in where:
                raise SystemExit(f"key {key!r} on servers {where[key]} and {index}")
            where[key] = index
    total = sum(conn.dbsize() for conn in backends.values())
    missing = [k for k in keys if k not in where]
    if missing or len(where) != len(keys) or total != len(keys):
        raise SystemExit(f"case {describe(case)}: {len(missing)} keys missing, "
                         f"{len(where)} found on the pool, {total} on all servers")
    return [where[k] for k in keys]


def record(args, ports: list) -> dict:
    """Runs the servers and nutcracker, returns the data file's content."""
    keys = make_keys()
    cases = make_cases(ports)
    listens = [p for p in free_ports(len(cases) + 1 + len(ports)) if p not in ports]
    listens = listens[:len(cases) + 1]
    if len(listens) < len(cases) + 1:
        raise SystemExit("free listen ports collide with the redis ports; run again")
    procs = []
    with tempfile.TemporaryDirectory(prefix="twemproxy-placement-") as tmp:
        try:
            for port in ports:
                procs.append(start_redis(args.redis_server, port, tmp))
            for port, proc in zip(ports, procs):
                wait_for_port(port, proc, f"redis-server on {port}")
            nut = start_nutcracker(args.nutcracker, cases, listens[:-1], listens[-1], tmp)
            procs.append(nut)
            for port in listens[:-1]:
                wait_for_port(port, nut, "nutcracker")
            backends = {port: client(port) for port in ports}
            for case, listen in zip(cases, listens):
                case["placement"] = record_case(case, listen, backends, keys)
            for conn in backends.values():
                conn.close()
        finally:
            stop(procs)
    return {"generator": GENERATOR, "nutcracker": nutcracker_version(args.nutcracker),
            "keys_hex": [k.hex() for k in keys], "cases": cases}


# ---------------------------------------------------------------------------------------------
# Output and --check


def public_case(case: dict) -> dict:
    servers = [{k: s[k] for k in ("name", "weight", "named")} for s in case["servers"]]
    return {"distribution": case["distribution"], "hash": case["hash"],
            "hash_tag": case["hash_tag"], "servers": servers, "placement": case["placement"]}


def render(data: dict) -> str:
    """JSON with one server per line and one line per placement array, for readable diffs."""
    dump = lambda v: json.dumps(v, ensure_ascii=True)
    out = ["{", f'  "generator": {dump(data["generator"])},',
           f'  "nutcracker": {dump(data["nutcracker"])},', '  "keys_hex": [']
    out.append(",\n".join(f"    {dump(k)}" for k in data["keys_hex"]))
    out += ["  ],", '  "cases": [']
    blocks = []
    for case in map(public_case, data["cases"]):
        servers = ",\n".join(f"        {dump(s)}" for s in case["servers"])
        blocks.append("    {\n"
                      f'      "distribution": {dump(case["distribution"])}, '
                      f'"hash": {dump(case["hash"])}, "hash_tag": {dump(case["hash_tag"])},\n'
                      f'      "servers": [\n{servers}\n      ],\n'
                      f'      "placement": {dump(case["placement"])}\n    }}')
    out.append(",\n".join(blocks))
    out += ["  ]", "}"]
    text = "\n".join(out) + "\n"
    expected = dict(data, cases=[public_case(c) for c in data["cases"]])
    if json.loads(text) != expected:
        raise SystemExit("internal error: rendered JSON does not round-trip")
    return text


def describe(case: dict) -> str:
    servers = case["servers"]
    kind = "named" if servers[0]["named"] else "unnamed"
    weights = ",".join(str(s["weight"]) for s in servers)
    tag = f" hash_tag={case['hash_tag']}" if case["hash_tag"] else ""
    return f"{case['distribution']}/{case['hash']} {kind} n={len(servers)} w={weights}{tag}"


def recorded_ports(committed: dict) -> list:
    """The redis ports of the recording, in listed order (from the 16-server modula case)."""
    for case in committed["cases"]:
        servers = case["servers"]
        if len(servers) == NREDIS and not servers[0]["named"]:
            return [int(s["name"].rsplit(":", 1)[1]) for s in servers]
    return []


def case_shape(case: dict) -> tuple:
    servers = tuple((s["weight"], s["named"], s["name"] if s["named"] else "")
                    for s in case["servers"])
    return case["distribution"], case["hash"], case["hash_tag"], servers


def compare(committed: dict, fresh: dict, same_ports: bool) -> bool:
    ok = True
    if committed["nutcracker"] != fresh["nutcracker"]:
        print(f"note: recorded with nutcracker {committed['nutcracker']}, "
              f"checking with {fresh['nutcracker']}")
    if committed["keys_hex"] != fresh["keys_hex"]:
        print("DIFF: the key list differs from the committed one (script changed?)")
        return False
    old_cases, new_cases = committed["cases"], [public_case(c) for c in fresh["cases"]]
    if len(old_cases) != len(new_cases):
        print(f"DIFF: {len(old_cases)} committed cases, {len(new_cases)} now")
        return False
    keys = fresh["keys_hex"]
    compared = skipped = 0
    for old, new in zip(old_cases, new_cases):
        if case_shape(old) != case_shape(new):
            print(f"DIFF: case {describe(old)} is now {describe(new)}")
            ok = False
            continue
        if port_dependent(new) and not same_ports:
            skipped += 1
            continue
        compared += 1
        moved = [i for i, (a, b) in enumerate(zip(old["placement"], new["placement"])) if a != b]
        if moved:
            ok = False
            first = ", ".join(f"{bytes.fromhex(keys[i])!r}: {old['placement'][i]}->"
                              f"{new['placement'][i]}"
                              for i in moved[:5])
            print(f"DIFF: {describe(new)}: {len(moved)}/{len(keys)} keys placed elsewhere "
                  f"(first: {first})")
    print(f"{compared} cases compared, {skipped} unnamed-ketama cases skipped"
          + (" (they hash the recorded ports, which were not free)" if skipped else ""))
    return ok


def shown(path: str) -> str:
    rel = os.path.relpath(os.path.abspath(path), ROOT)
    return path if rel.startswith("..") else rel


def check(args) -> int:
    with open(args.out) as f:
        committed = json.load(f)
    ports = recorded_ports(committed)
    same_ports = len(ports) == NREDIS and all(port_is_free(p) for p in ports)
    if same_ports:
        print("reusing the recorded redis ports: every case is compared")
    else:
        print("the recorded redis ports are not all free: unnamed-ketama cases will be skipped")
        ports = listed_order(free_ports(NREDIS))
    fresh = record(args, ports)
    if compare(committed, fresh, same_ports):
        print(f"OK: placements match {shown(args.out)}")
        return 0
    print(f"FAIL: placements differ from {shown(args.out)}")
    return 1


def main() -> int:
    parser = argparse.ArgumentParser(
        description="Run real nutcracker (twemproxy) in front of 16 local redis-servers, write "
        "200 fixed keys through it for every hash function with modula and ketama "
        "distributions (weights, names, hash tags), and record which server each key landed "
        "on, as reference data for shardproxy's twemproxy placement tests.")
    parser.add_argument("--out", default=DEFAULT_OUT,
                        help="data file to write (or to compare with, with --check); "
                        "default: %(default)s")
    parser.add_argument("--check", action="store_true",
                        help="record into memory and compare placements with --out; exit 1 "
                        "on any difference")
    parser.add_argument("--nutcracker", default="/usr/sbin/nutcracker",
                        help="nutcracker binary (default: %(default)s)")
    parser.add_argument("--redis-server", default="redis-server",
                        help="redis-server binary (default: %(default)s)")
    args = parser.parse_args()
    raise_fd_limit()
    started = time.monotonic()
    if args.check:
        status = check(args)
    else:
        data = record(args, listed_order(free_ports(NREDIS)))
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as f:
            f.write(render(data))
        print(f"wrote {len(data['cases'])} cases x {len(data['keys_hex'])} keys to {args.out}")
        status = 0
    print(f"took {time.monotonic() - started:.1f}s")
    return status


if __name__ == "__main__":
    sys.exit(main())
