#!/usr/bin/python3
"""Memory per client connection of shardproxy: the proxy's RSS growth per connection when N
connections are open and idle, when each has one request in flight at the same moment, and when
each has a pipeline of P requests in flight, with the figure again after the proxy's trim timer
has given memory back. Counts, not timings: it moves little with the machine's load.

It starts its own redis-server shards (--save '' --appendonly no) and one shardproxy on free
loopback ports, opens the connections from this process, and stops everything it started by PID.
Every request is a GET of a key that does not exist, so replies are small ($-1) and memory is the
proxy's own. Needs ulimit -n above N + 100 (the script raises its soft limit to the hard one).

Usage: tools/conn-memory.py [options]
  --bin PATH        shardproxy binary (default build-dev/proxy/shardproxy)
  --connections N   client connections (default 5000)
  --pipeline P      requests per connection in the pipelined phase (default 20)
  --shards S        redis-server shards (default 2)
  --workers W       proxy workers (default 1)
  --repeat R        measure R times, each with a fresh proxy (default 1)
Prints one line per phase: RSS in KiB and bytes per connection over the RSS before the
connections were opened, and the command used. Exit status 0, or 1 when a phase failed.
"""

import argparse
import os
import resource
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GET = b"*2\r\n$3\r\nGET\r\n$12\r\nnot-a-key-00\r\n"
NIL = b"$-1\r\n"
TRIM_WAIT_S = 3.0   # the worker's trim timer runs every second
SETTLE_S = 0.5


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for pid {pid}")


def wait_port(port, timeout=15.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port} after {timeout} s")


def read_replies(conns, count, timeout=60.0):
    """Reads `count` nil replies from every connection."""
    want = len(NIL) * count
    deadline = time.monotonic() + timeout
    for c in conns:
        got = 0
        while got < want:
            if time.monotonic() > deadline:
                raise RuntimeError("replies did not arrive in time")
            data = c.recv(65536)
            if not data:
                raise RuntimeError("the proxy closed a connection")
            got += len(data)


def measure(args, work):
    procs = []
    try:
        shard_ports = []
        for i in range(args.shards):
            port = free_port()
            shard_ports.append(port)
            procs.append(subprocess.Popen(
                ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                 "--appendonly", "no", "--dir", work],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        proxy_port = free_port()
        config = os.path.join(work, "proxy.yaml")
        with open(config, "w") as f:
            f.write(f"listen: {{host: 127.0.0.1, port: {proxy_port}}}\n"
                    f"workers: {args.workers}\nlog_level: warn\nmetrics: {{listen: \"\"}}\n"
                    "shards:\n")
            for i, port in enumerate(shard_ports):
                f.write(f"  - {{name: s{i}, address: \"127.0.0.1:{port}\"}}\n")
        for port in shard_ports:
            wait_port(port)
        proxy = subprocess.Popen([args.bin, "--config", config], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
        procs.append(proxy)
        wait_port(proxy_port)
        time.sleep(SETTLE_S)
        base = rss_kib(proxy.pid)
        n = args.connections
        conns = [socket.create_connection(("127.0.0.1", proxy_port)) for _ in range(n)]
        rows = []

        def phase(name):
            time.sleep(SETTLE_S)
            rss = rss_kib(proxy.pid)
            rows.append((name, rss, (rss - base) * 1024 / n))

        phase("idle")
        for c in conns:
            c.sendall(GET)
        read_replies(conns, 1)
        phase("1 request each, all in flight at once")
        time.sleep(TRIM_WAIT_S)
        phase("  after the trim timer")
        batch = GET * args.pipeline
        for c in conns:
            c.sendall(batch)
        read_replies(conns, args.pipeline)
        phase(f"{args.pipeline} pipelined requests each")
        time.sleep(TRIM_WAIT_S)
        phase("  after the trim timer")
        for c in conns:
            c.close()
        return base, rows
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()


def main():
    parser = argparse.ArgumentParser(usage=argparse.SUPPRESS, add_help=False, description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-h", "--help", action="help", help=argparse.SUPPRESS)
    parser.add_argument("--bin", default=os.path.join(ROOT, "build-dev", "proxy", "shardproxy"),
                        help=argparse.SUPPRESS)
    parser.add_argument("--connections", type=int, default=5000, help=argparse.SUPPRESS)
    parser.add_argument("--pipeline", type=int, default=20, help=argparse.SUPPRESS)
    parser.add_argument("--shards", type=int, default=2, help=argparse.SUPPRESS)
    parser.add_argument("--workers", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--repeat", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not os.access(args.bin, os.X_OK):
        print(f"conn-memory: no executable shardproxy at {args.bin} (--bin)", file=sys.stderr)
        return 1
    if args.connections < 1 or args.pipeline < 1 or args.shards < 1 or args.workers < 1 or \
            args.repeat < 1:
        print("conn-memory: --connections, --pipeline, --shards, --workers and --repeat must be "
              "at least 1", file=sys.stderr)
        return 1
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < args.connections + 100:
        print(f"conn-memory: {args.connections} connections need an open-file limit above "
              f"{args.connections + 100}; the hard limit is {hard}", file=sys.stderr)
        return 1
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))

    runs = []
    for r in range(args.repeat):
        with tempfile.TemporaryDirectory(prefix="conn-memory.") as work:
            try:
                runs.append(measure(args, work))
            except (OSError, RuntimeError) as e:
                print(f"conn-memory: run {r + 1} failed: {e}", file=sys.stderr)
                return 1
    print(f"shardproxy {args.bin}: {args.connections} connections, {args.shards} shards, "
          f"{args.workers} worker(s); RSS before the connections {runs[0][0]} KiB")
    print(f"{'phase':44} {'RSS KiB':>9} {'B per connection':>17}"
          + ("  (runs)" if args.repeat > 1 else ""))
    for i, (name, _, _) in enumerate(runs[0][1]):
        rss = statistics.median(run[1][i][1] for run in runs)
        per = statistics.median(run[1][i][2] for run in runs)
        each = " ".join(f"{run[1][i][2]:.0f}" for run in runs) if args.repeat > 1 else ""
        print(f"{name:44} {rss:9.0f} {per:17.0f}  {each}")
    print(f"command: tools/conn-memory.py --bin {args.bin} --connections {args.connections} "
          f"--pipeline {args.pipeline} --shards {args.shards} --workers {args.workers} "
          f"--repeat {args.repeat}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
