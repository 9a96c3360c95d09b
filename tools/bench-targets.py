#!/usr/bin/env python3
"""Every per-request cost target of shardproxy, measured and checked in one command.

Runs, one after the other on this machine, the tools that measure each target and prints one
Markdown table: the target, its bar, what was measured (medians, with the per-round range where
the figure is timed), and whether it holds. Timed figures are ratios within one run; counted ones
(instructions from callgrind, system calls from strace) do not move with the machine's load.

  CPU per request against redis-server serving the same load directly, at -P 1 and -P 16
      tools/bench-peers.sh -n 100000 -r ROUNDS
  system calls per request at -P 1 with 50 clients and with 1 client; instructions per request
      tools/profile.sh --mode st|cg
  16,000 connections against 1,000: CPU per request
      tools/bench-connections.sh -r CONN_ROUNDS
  memory per idle and per active connection at 16,000
      tools/conn-memory.py --connections 16000
  two workers against one: instructions per request (50 clients per worker) and system calls per
  request (the same closed-loop client on each worker)
      tools/profile.sh --mode cg --workers 2 --clients 100; tools/worker-syscalls.py
  reported beside them, with no bar: RESP3 clients' instructions and system calls per request
  against RESP2's, and TLS's CPU per request against the plain path's
      tools/profile.sh --resp3; tools/bench-tls.sh --rounds CONN_ROUNDS

Usage: tools/bench-targets.py [--rounds R] [--conn-rounds R] [--bin PATH] [--logs DIR] [--quick]
  --rounds R       bench-peers rounds (default 7)
  --conn-rounds R  bench-connections and bench-tls rounds (default 3)
  --bin PATH       shardproxy binary (default build-dev/proxy/shardproxy; copy it elsewhere
                   first if a rebuild may replace it during the run)
  --logs DIR       keep each tool's whole output there (default: a temporary directory, removed)
  --quick          every tool at a tiny scale (a few minutes): checks that the command
                   works; its figures are not the targets' and its verdicts say so
Takes about 20 minutes at the defaults. Each tool starts and stops its own processes.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Failed(Exception):
    pass


def run(name, argv, logs, env=None, timeout=3600):
    print(f"bench-targets: {name} ...", file=sys.stderr, flush=True)
    start = time.monotonic()
    out = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, timeout=timeout,
                         env=dict(os.environ, **(env or {})))
    with open(os.path.join(logs, name + ".log"), "w") as f:
        f.write("$ " + " ".join(argv) + "\n" + out.stdout + out.stderr)
    if out.returncode != 0:
        raise Failed(f"{name} failed (exit {out.returncode}):\n{out.stdout[-2000:]}"
                     f"{out.stderr[-2000:]}")
    print(f"bench-targets: {name} done in {time.monotonic() - start:.0f} s", file=sys.stderr)
    return out.stdout


def find(pattern, text, name):
    m = re.search(pattern, text, re.M)
    if not m:
        raise Failed(f"{name}: no line matching {pattern!r} in its output")
    return m


def number(text):
    return float(text.replace(",", ""))


def main():
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("-h", "--help", action="store_true")
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--conn-rounds", type=int, default=3)
    p.add_argument("--bin", default=os.path.join(ROOT, "build-dev", "proxy", "shardproxy"))
    p.add_argument("--logs")
    p.add_argument("--quick", action="store_true")
    args = p.parse_args()
    if args.help:
        print(__doc__.strip())
        return 0
    if args.rounds < 1 or args.conn_rounds < 1:
        p.error("--rounds and --conn-rounds take positive counts")
    binary = os.path.abspath(args.bin)
    if not os.access(binary, os.X_OK):
        p.error(f"no shardproxy binary at {binary} (build it, or pass --bin)")
    logs = args.logs or tempfile.mkdtemp(prefix="bench-targets.")
    os.makedirs(logs, exist_ok=True)
    q = args.quick
    tools = os.path.join(ROOT, "tools")
    rows = []

    def row(target, bar, measured, holds):
        verdict = ("yes" if holds else "NO") if not q else "(quick run: not a measurement)"
        rows.append(f"| {target} | {bar} | {measured} | {verdict} |")

    try:
        # CPU against redis-server direct.
        peers = run("bench-peers", [os.path.join(tools, "bench-peers.sh"),
                                    "-n", "2000" if q else "100000",
                                    "-r", "1" if q else str(args.rounds)],
                    logs, env={"SHARDPROXY_BIN": binary})
        for depth, bar in (("1", 1.0), ("16", 0.7)):
            m = find(r"^CPU per request, shardproxy/redis-server's own CPU serving the load "
                     r"directly at -P %s: median ([0-9.]+) over (\d+) rounds \(range ([0-9.]+) to "
                     r"([0-9.]+)\)" % depth, peers, "bench-peers")
            row(f"-P {depth}: proxy CPU per request / redis-server's own serving it directly",
                f"≤ {bar}", f"{m.group(1)} ({m.group(3)}–{m.group(4)}, {m.group(2)} rounds)",
                float(m.group(1)) <= bar)

        # System calls and instructions per request, one worker.
        small = ["--requests", "200,600"] if q else []
        repeat = ["--repeat", "1" if q else "3"]
        prof = os.path.join(tools, "profile.sh")
        for clients, bar in (("50", 2.0), ("1", 4.0)):
            out = run(f"profile-st-c{clients}", [prof, "--bin", binary, "--pipeline", "1",
                                                 "--clients", clients, "--mode", "st"] +
                      small + repeat, logs)
            m = find(r"^syscalls/request\s+([0-9.,]+)", out, "profile.sh")
            if clients == "50":
                resp2_calls = m.group(1)
            row(f"-P 1, {clients} client{'s' if clients != '1' else ''}: system calls per "
                "request", f"≤ {bar}", m.group(1), number(m.group(1)) <= bar)
        instr = {}
        for workers, clients in (("1", "50"), ("2", "100")):
            out = run(f"profile-cg-w{workers}", [prof, "--bin", binary, "--pipeline", "1",
                                                 "--workers", workers, "--clients", clients,
                                                 "--mode", "cg"] + small + ["--repeat", "1"],
                      logs)
            instr[workers] = number(find(r"^instructions/request\s+([0-9.,]+)", out,
                                         "profile.sh").group(1))
        out = run("profile-cg-p16", [prof, "--bin", binary, "--pipeline", "16", "--mode", "cg"] +
                  (["--requests", "2000,6000"] if q else []) + ["--repeat", "1"], logs)
        instr16 = number(find(r"^instructions/request\s+([0-9.,]+)", out, "profile.sh").group(1))
        rows.append(f"| instructions per request, 1 worker (reported, no bar) | — | "
                    f"{instr['1']:,.0f} at -P 1, {instr16:,.0f} at -P 16 | — |")
        change = instr["2"] / instr["1"] - 1
        row("two workers (50 clients each) against one: instructions per request", "within 5%",
            f"{instr['2']:,.0f} against {instr['1']:,.0f}: {change:+.1%}", abs(change) <= 0.05)
        out = run("profile-resp3", [prof, "--bin", binary, "--pipeline", "1", "--resp3",
                                    "--mode", "both"] + small + ["--repeat", "1"], logs)
        resp3_instr = number(find(r"^instructions/request\s+([0-9.,]+)", out,
                                  "profile.sh").group(1))
        resp3_calls = find(r"^syscalls/request\s+([0-9.,]+)", out, "profile.sh").group(1)
        rows.append(f"| RESP3 clients (redis-benchmark -3), -P 1, 50 clients (reported, no bar) "
                    f"| — | {resp3_instr:,.0f} instructions and {resp3_calls} system calls per "
                    f"request; RESP2: {instr['1']:,.0f} and {resp2_calls} | — |")
        out = run("worker-syscalls", ["/usr/bin/python3", os.path.join(tools, "worker-syscalls.py"),
                                      "--bin", binary] +
                  (["--requests", "40,120", "--repeat", "1"] if q else []), logs)
        calls = dict(re.findall(r"^\| (\d+) \| \d+ \| ([0-9.]+) \(", out, re.M))
        if "1" not in calls or "2" not in calls:
            raise Failed("worker-syscalls: no row for 1 and 2 workers:\n" + out)
        change = float(calls["2"]) / float(calls["1"]) - 1
        row("two workers against one, the same client on each: system calls per request",
            "within 5%", f"{calls['2']} against {calls['1']}: {change:+.1%}", abs(change) <= 0.05)

        # Many connections.
        c1, c2 = ("20", "60") if q else ("1000", "16000")
        out = run("bench-connections", [os.path.join(tools, "bench-connections.sh"),
                                        "-r", "1" if q else str(args.conn_rounds),
                                        "--connections", f"{c1},{c2}",
                                        "-n", "2000" if q else "200000", "--bin", binary], logs)
        m = find(r"^CPU per request, shardproxy at %s over %s connections: ([0-9.]+) \(([0-9.]+)"
                 r"–([0-9.]+)\) over (\d+) rounds" % (c2, c1), out, "bench-connections")
        row(f"{int(c2):,} connections against {int(c1):,}: CPU per request", "≤ 1.3×",
            f"{m.group(1)} ({m.group(2)}–{m.group(3)}, {m.group(4)} rounds)",
            float(m.group(1)) <= 1.3)
        conns = "200" if q else "16000"
        out = run("conn-memory", ["/usr/bin/python3", os.path.join(tools, "conn-memory.py"),
                                  "--bin", binary, "--connections", conns, "--repeat", "1"], logs)
        idle = number(find(r"^idle\s+\d+\s+([0-9.]+)", out, "conn-memory").group(1))
        active = number(find(r"^1 request each, all in flight at once\s+\d+\s+([0-9.]+)", out,
                             "conn-memory").group(1))
        row(f"memory per idle connection at {int(conns):,}", "≤ 1 KiB", f"{idle:,.0f} B",
            idle <= 1024)
        row(f"memory per active connection at {int(conns):,}", "≤ 2 KiB", f"{active:,.0f} B",
            active <= 2048)
        bench = os.environ.get("SHARDBENCH_BIN",
                               os.path.join(ROOT, "build-dev", "bench", "shardbench"))
        out = run("bench-tls", [os.path.join(tools, "bench-tls.sh"), "--bin", binary, "--bench", bench,
                                "--rounds", "1" if q else str(args.conn_rounds)] +
                  (["--requests", "2000,8000"] if q else []), logs)
        tls = []
        for depth in ("1", "16"):
            m = find(r"^\| client \+ backend TLS \| %s \| [^|]+ \| \*\*([0-9.]+)\*\* \(([^)]*)\)"
                     % depth, out, "bench-tls")
            tls.append(f"{m.group(1)} ({m.group(2)}) at -P {depth}")
        rows.append("| TLS to clients and shards: proxy CPU per request / plain (reported, no bar) "
                    f"| — | {'; '.join(tls)} | — |")
    except (Failed, subprocess.TimeoutExpired) as e:
        print(f"bench-targets: {e}", file=sys.stderr)
        print(f"bench-targets: the tools' outputs are in {logs}", file=sys.stderr)
        return 1

    print("| target | bar | measured | holds |")
    print("|--|--|--|--|")
    print("\n".join(rows))
    print(f"\nCommand: tools/bench-targets.py --rounds {args.rounds} --conn-rounds "
          f"{args.conn_rounds}{' --quick' if q else ''} ({time.strftime('%Y-%m-%d')}, "
          f"{os.cpu_count()} cores; each tool's output and command: {logs if args.logs else 'pass --logs DIR'})")
    if not args.logs:
        shutil.rmtree(logs, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
