#!/usr/bin/env python3
"""System calls per request for one worker against several, with the same load on each worker.

With io_uring a worker's system calls are per loop turn (a wait, and a submission of the shard
commands), so per request they follow how many requests a turn carries, which on a busy machine
moves with timing. This tool fixes the batching: it gives each worker the same closed-loop
clients (CLIENTS per worker, each one request or one pipeline of PIPELINE commands at a time,
placed by asking the proxy's INFO which worker took each connection), so a second worker must
cost exactly what the first does per request if it shares nothing with it.

For each worker count in --workers (default 1,2) it starts 4 redis-server shards and shardproxy
(tools/local-shards.sh), connects the clients, attaches `strace -c -f` to the proxy's threads,
runs N1 and then N2 requests per client (SET and GET in turn, 256-byte values), and prints the
MARGINAL system calls per request, (calls at N2 - calls at N1) / (requests at N2 - at N1), with
the top calls. Everything it starts is stopped by PID on exit.

Usage: tools/worker-syscalls.py [--workers 1,2] [--clients C] [--pipeline P]
                                [--requests N1,N2] [--repeat R] [--bin PATH]
(defaults 1,2; 1 client per worker; pipeline 1; 2000,6000 per client; 3 repeats)
"""
import argparse
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def encode(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class Conn:
    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def _line(self):
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("the proxy closed the connection")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def reply(self):
        line = self._line()
        if line[:1] == b"$":
            n = int(line[1:])
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                chunk = self.sock.recv(65536)
                if not chunk:
                    raise ConnectionError("the proxy closed the connection")
                self.buf += chunk
            data, self.buf = self.buf[:n], self.buf[n + 2:]
            return data
        if line[:1] == b"-":
            raise RuntimeError(line.decode())
        return line[1:]

    def cmd(self, *args):
        self.sock.sendall(encode(*args))
        return self.reply()

    def close(self):
        self.sock.close()


def worker_clients(ctl, workers):
    info = ctl.cmd("INFO", "clients").decode()
    counts = dict(re.findall(r"^worker(\d+)_clients:(\d+)", info, re.M))
    return [int(counts.get(str(w), 0)) for w in range(workers)]


def place(port, ctl, workers, per_worker):
    """Connections, per_worker on each worker: a connection that lands on a full worker goes."""
    mine = [[] for _ in range(workers)]
    deadline = time.monotonic() + 60
    while any(len(m) < per_worker for m in mine):
        if time.monotonic() > deadline:
            raise RuntimeError("could not spread the clients over the workers")
        before = worker_clients(ctl, workers)
        c = Conn(port)
        c.cmd("PING")  # the worker has it once it answered
        after = worker_clients(ctl, workers)
        grew = [w for w in range(workers) if after[w] > before[w]]
        if len(grew) == 1 and len(mine[grew[0]]) < per_worker:
            mine[grew[0]].append(c)
        else:
            c.close()
            time.sleep(0.05)
    return [c for m in mine for c in m]


def drive(conns, requests, pipeline):
    value = b"v" * 256
    errors = []

    def one(i, c):
        try:
            for n in range(requests):
                key = b"key:%d:%d" % (i, n % 1000)
                batch = [encode("SET", key, value) if (n + j) % 2 == 0 else encode("GET", key)
                         for j in range(pipeline)]
                c.sock.sendall(b"".join(batch))
                for _ in range(pipeline):
                    c.reply()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(repr(e))

    threads = [threading.Thread(target=one, args=(i, c)) for i, c in enumerate(conns)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise RuntimeError("a client failed: " + errors[0])


def traced(pid, run):
    """strace -c -f on every thread of pid while run() runs: {syscall: calls}."""
    out = tempfile.NamedTemporaryFile(prefix="worker-syscalls.", suffix=".strace", delete=False)
    out.close()
    tracer = subprocess.Popen(["strace", "-c", "-f", "-p", str(pid), "-o", out.name],
                              stderr=subprocess.DEVNULL)
    try:
        time.sleep(1.0)  # attached to every thread
        run()
        time.sleep(0.2)
    finally:
        tracer.send_signal(signal.SIGINT)
        tracer.wait(timeout=30)
    calls = {}
    with open(out.name) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 5 and parts[0][0].isdigit() and not line.startswith("100.00"):
                try:
                    calls[parts[-1]] = int(parts[3])
                except ValueError:
                    pass
    os.unlink(out.name)
    return calls


def measure(args, workers):
    env = dict(os.environ, SHARDPROXY_BIN=args.bin,
               SP_RUN_DIR=tempfile.mkdtemp(prefix="worker-syscalls."))
    local = os.path.join(ROOT, "tools", "local-shards.sh")
    subprocess.run([local, "start", "4", "--proxy", "--workers", str(workers)], env=env,
                   check=True, stdout=subprocess.DEVNULL)
    try:
        with open(os.path.join(env["SP_RUN_DIR"], "proxy.port")) as f:
            port = int(f.read())
        with open(os.path.join(env["SP_RUN_DIR"], "proxy.pid")) as f:
            pid = int(f.read())
        ctl = Conn(port)
        conns = place(port, ctl, workers, args.clients)
        drive(conns, 200, args.pipeline)  # warm: pools, buffers, shard links
        n1, n2 = args.requests
        samples = []
        tops = []
        for _ in range(args.repeat):
            c1 = traced(pid, lambda: drive(conns, n1, args.pipeline))
            c2 = traced(pid, lambda: drive(conns, n2, args.pipeline))
            dreq = (n2 - n1) * args.pipeline * len(conns)
            samples.append((sum(c2.values()) - sum(c1.values())) / dreq)
            tops.append({k: (c2.get(k, 0) - c1.get(k, 0)) / dreq for k in c2})
        for c in conns:
            c.close()
        ctl.close()
        # The calls of the repeat whose total is the median.
        middle = sorted(range(len(samples)), key=lambda i: samples[i])[(len(samples) - 1) // 2]
        return samples, tops[middle]
    finally:
        subprocess.run([local, "stop"], env=env, stdout=subprocess.DEVNULL)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workers", default="1,2")
    p.add_argument("--clients", type=int, default=1, help="closed-loop clients per worker")
    p.add_argument("--pipeline", type=int, default=1)
    p.add_argument("--requests", default="2000,6000", help="N1,N2 requests per client")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--bin", default=os.path.join(ROOT, "build-dev", "proxy", "shardproxy"))
    args = p.parse_args()
    try:
        worker_counts = [int(w) for w in args.workers.split(",")]
        n1, n2 = (int(n) for n in args.requests.split(","))
    except ValueError:
        p.error("--workers takes W,W,... and --requests N1,N2")
    if not 0 < n1 < n2 or not all(0 < w <= 16 for w in worker_counts):
        p.error("need 0 < N1 < N2 and 1..16 workers")
    if args.clients < 1 or args.pipeline < 1 or args.repeat < 1:
        p.error("--clients, --pipeline and --repeat take positive counts")
    if not os.access(args.bin, os.X_OK):
        p.error(f"no shardproxy binary at {args.bin} (build it, or pass --bin)")
    args.requests = (n1, n2)
    print(f"worker-syscalls: {args.clients} closed-loop client(s) per worker, pipeline "
          f"{args.pipeline}, SET and GET of 256 B, {n1} and {n2} requests per client, "
          f"{args.repeat} repeat(s); 4 shards", file=sys.stderr)
    print("| workers | clients | syscalls/request (median, repeats) | top calls per request (the "
          "median repeat) |")
    print("|--:|--:|--|--|")
    for w in worker_counts:
        samples, top = measure(args, w)
        tops = ", ".join(f"{k} {v:.3f}" for k, v in
                         sorted(top.items(), key=lambda kv: -kv[1])[:3] if v > 0.0005)
        print(f"| {w} | {w * args.clients} | {statistics.median(samples):.3f} "
              f"({' '.join(f'{s:.3f}' for s in samples)}) | {tops} |", flush=True)
    print(f"\nCommand: tools/worker-syscalls.py --workers {args.workers} --clients {args.clients} "
          f"--pipeline {args.pipeline} --requests {n1},{n2} --repeat {args.repeat}")


if __name__ == "__main__":
    main()
