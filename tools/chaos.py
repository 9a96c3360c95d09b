#!/usr/bin/python3
"""Chaos run: a verifying load through shardproxy while a random shard is killed and restarted.

Starts 4 redis-server shards and the proxy on free loopback ports, runs client threads that
pipeline SET/GET pairs on their own keys and check every reply, and every --interval seconds
kills one shard with SIGKILL and restarts it --down seconds later. Prints requests, errors by
kind, mismatches (must be 0), proxy exits (must be 0) and, per shard, the longest time a live
shard went without a successful reply. Everything it starts is stopped by PID at the end.
"""

import argparse
import os
import random
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import redis

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def crc16(data: bytes) -> int:
    crc = 0
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def key_slot(key: str) -> int:
    data = key.encode()
    start = data.find(b"{")
    if start >= 0:
        end = data.find(b"}", start + 1)
        if end > start + 1:
            data = data[start + 1:end]
    return crc16(data) % 16384


def shard_of(key: str, shards: int) -> int:
    # The proxy's even split: shard i ends at round((i + 1) * 16384 / n).
    slot = key_slot(key)
    for i in range(shards):
        if slot < (2 * (i + 1) * 16384 + shards) // (2 * shards):
            return i
    return shards - 1


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, timeout: float) -> bool:
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return True
        except OSError:
            time.sleep(0.05)
    return False


class Shard:
    def __init__(self, workdir: str, index: int):
        self.port = free_port()
        self.dir = os.path.join(workdir, "shard%d" % index)
        os.makedirs(self.dir, exist_ok=True)
        self.proc = None
        self.start()

    def start(self):
        log = open(os.path.join(self.dir, "redis.log"), "ab")
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", self.dir],
            stdout=log, stderr=subprocess.STDOUT)
        if not wait_port(self.port, 10):
            raise RuntimeError("redis-server on port %d did not start" % self.port)

    def kill9(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


SHARD_ERROR = re.compile(r"^shard (\S+) \(127\.0\.0\.1:\d+\) unavailable: (.*)$")


class Stats:
    def __init__(self, shards: int):
        self.lock = threading.Lock()
        self.requests = 0
        self.ok = 0
        self.errors = {}
        self.mismatches = 0
        self.first_mismatches = []
        self.last_ok = [time.time()] * shards
        self.longest_gap = [0.0] * shards

    def error(self, text: str):
        m = SHARD_ERROR.match(text)
        kind = m.group(2) if m else "unexpected: " + text
        kind = re.sub(r"\d+ ms", "N ms", kind)
        kind = re.sub(r"\(last: .*\)", "(last: ...)", kind)
        with self.lock:
            self.errors[kind] = self.errors.get(kind, 0) + 1
        return m is not None

    def mismatch(self, what: str):
        with self.lock:
            self.mismatches += 1
            if len(self.first_mismatches) < 5:
                self.first_mismatches.append(what)


def client_thread(port, shards, index, stats, live, stop):
    r = redis.Redis(host="127.0.0.1", port=port, socket_timeout=5)
    keys = ["chaos:%d:%d" % (index, k) for k in range(64)]
    owner = [shard_of(k, shards) for k in keys]
    known = [None] * len(keys)
    seq = 0
    pos = 0
    while not stop.is_set():
        batch = []
        pipe = r.pipeline(transaction=False)
        for _ in range(16):
            k = pos % len(keys)
            pos += 1
            seq += 1
            value = "%s:%d" % (keys[k], seq)
            batch.append((k, value))
            pipe.set(keys[k], value)
            pipe.get(keys[k])
        try:
            replies = pipe.execute(raise_on_error=False)
        except redis.ConnectionError as e:
            stats.mismatch("connection to the proxy lost: %s" % e)
            return
        now = time.time()
        for i, (k, value) in enumerate(batch):
            shard = owner[k]
            for part in (0, 1):
                reply = replies[2 * i + part]
                with stats.lock:
                    stats.requests += 1
                if isinstance(reply, Exception):
                    if not stats.error(str(reply)):
                        stats.mismatch("unexpected error for %s: %s" % (keys[k], reply))
                    known[k] = None
                    continue
                if part == 0:
                    if reply is not True:
                        stats.mismatch("SET %s -> %r" % (keys[k], reply))
                    known[k] = value
                else:
                    got = reply.decode() if reply is not None else None
                    if known[k] is not None and got != known[k]:
                        stats.mismatch("GET %s -> %r, expected %r" % (keys[k], got, known[k]))
                    elif known[k] is None and got is not None and not got.startswith(keys[k] + ":"):
                        stats.mismatch("GET %s -> foreign value %r" % (keys[k], got))
                with stats.lock:
                    stats.ok += 1
                    if live[shard]:
                        stats.longest_gap[shard] = max(stats.longest_gap[shard],
                                                       now - stats.last_ok[shard])
                    stats.last_ok[shard] = now


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--proxy-bin", default=os.path.join(ROOT, "build/proxy/shardproxy"))
    parser.add_argument("--duration", type=float, default=60)
    parser.add_argument("--interval", type=float, default=10, help="seconds between kills")
    parser.add_argument("--down", type=float, default=3, help="seconds a killed shard stays down")
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    random.seed(args.seed)
    shards_n = 4
    workdir = tempfile.mkdtemp(prefix="shardproxy-chaos-")
    shards = []
    proxy = None
    stop = threading.Event()
    threads = []
    try:
        shards = [Shard(workdir, i) for i in range(shards_n)]
        conf = os.path.join(workdir, "proxy.yaml")
        with open(conf, "w") as f:
            f.write("shards:\n")
            for s in shards:
                f.write("  - address: 127.0.0.1:%d\n" % s.port)
            f.write("backend:\n  ping_interval_ms: 1000\n  retry_timeout_ms: 1000\n"
                    "  retry_timeout_max_ms: 1000\n")
        port = free_port()
        proxy = subprocess.Popen([args.proxy_bin, "--config", conf, "--port", str(port),
                                  "--workers", "2", "--log-level", "warn"],
                                 stdout=open(os.path.join(workdir, "proxy.log"), "wb"),
                                 stderr=subprocess.STDOUT)
        if not wait_port(port, 10):
            raise RuntimeError("shardproxy did not start; see %s/proxy.log" % workdir)
        stats = Stats(shards_n)
        live = [True] * shards_n
        for i in range(args.clients):
            t = threading.Thread(target=client_thread,
                                 args=(port, shards_n, i, stats, live, stop), daemon=True)
            t.start()
            threads.append(t)
        start = time.time()
        kills = 0
        next_kill = start + args.interval
        while time.time() - start < args.duration:
            time.sleep(0.1)
            if time.time() >= next_kill and time.time() + args.down < start + args.duration:
                victim = random.randrange(shards_n)
                live[victim] = False
                shards[victim].kill9()
                kills += 1
                print("t=%5.1fs kill -9 shard%d" % (time.time() - start, victim), flush=True)
                time.sleep(args.down)
                shards[victim].start()
                with stats.lock:
                    stats.last_ok[victim] = time.time()
                live[victim] = True
                print("t=%5.1fs restarted shard%d" % (time.time() - start, victim), flush=True)
                next_kill += args.interval
        stop.set()
        for t in threads:
            t.join(10)
        end = time.time()
        for i in range(shards_n):
            stats.longest_gap[i] = max(stats.longest_gap[i], end - stats.last_ok[i])
        proxy_exits = 0 if proxy.poll() is None else 1
        print()
        print("| metric | value |")
        print("|---|---|")
        print("| duration | %.0f s, %d shard kills |" % (args.duration, kills))
        print("| requests | %d |" % stats.requests)
        print("| successful | %d |" % stats.ok)
        for kind, n in sorted(stats.errors.items()):
            print("| errors: %s | %d |" % (kind, n))
        print("| mismatches | %d |" % stats.mismatches)
        print("| proxy exits/restarts | %d |" % proxy_exits)
        for i in range(shards_n):
            print("| longest window without success, shard%d (while live) | %.2f s |"
                  % (i, stats.longest_gap[i]))
        for m in stats.first_mismatches:
            print("mismatch:", m)
        return 1 if stats.mismatches or proxy_exits else 0
    finally:
        stop.set()
        if proxy and proxy.poll() is None:
            proxy.terminate()
            proxy.wait(10)
        for s in shards:
            s.stop()


if __name__ == "__main__":
    sys.exit(main())
