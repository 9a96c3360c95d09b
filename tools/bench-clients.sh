#!/usr/bin/env bash
# Benchmarks the load generators themselves: shardbench against redis-benchmark, both against
# the same redis-server in one run, with the same workload (-c 50 -d 256 -t set,get, one client
# thread) at pipeline depth 1 and 16. For each run it prints QPS (SET and GET) and the client's
# CPU microseconds per request: utime+stime from /proc/<pid>/stat, read when the client has exited
# but before it is reaped (so the whole run is counted), divided by the requests sent. Each
# configuration runs ROUNDS times, alternating the tools, and the best (lowest-CPU) round of each
# tool is compared: the machine is shared and noisy. The bar: shardbench at most 0.8x
# redis-benchmark's CPU per request at both depths. Prints a Markdown table; exit status 1 when
# the bar is missed.
#
#   tools/bench-clients.sh [-n REQUESTS_PER_TEST_AT_P1] [--rounds N]   (about a minute in all)
#
# -n defaults to 100000 at pipeline 1 (five times that at pipeline 16); --rounds to 3. Uses
# build/bench/shardbench (SP_BUILD_DIR or SHARDBENCH_BIN to override), building it (Release)
# when missing. The redis-server it starts is stopped by PID on exit.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
N=100000
ROUNDS=3
while [ $# -gt 0 ]; do
  case "$1" in
    -n) N="$2"; shift ;;
    --rounds) ROUNDS="$2"; shift ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "bench-clients: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

BUILD_DIR="${SP_BUILD_DIR:-build}"
case "$BUILD_DIR" in /*) ;; *) BUILD_DIR="$ROOT/$BUILD_DIR" ;; esac
SHARDBENCH_BIN="${SHARDBENCH_BIN:-$BUILD_DIR/bench/shardbench}"
for tool in redis-server redis-benchmark /usr/bin/python3; do
  command -v "$tool" >/dev/null || { echo "bench-clients: $tool missing (tools/install-deps.sh)" >&2; exit 1; }
done
if [ ! -x "$SHARDBENCH_BIN" ]; then
  cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$BUILD_DIR" --target shardbench -j"$(nproc)" | tail -n 1
fi

RUN_DIR="$(mktemp -d /tmp/shardbench-clients.XXXXXX)"
REDIS_PID=""
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if [ -n "$REDIS_PID" ] && kill -0 "$REDIS_PID" 2>/dev/null; then
    kill -TERM "$REDIS_PID" 2>/dev/null || true
    wait "$REDIS_PID" 2>/dev/null || true
  fi
  rm -rf "$RUN_DIR"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

PORT="$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
redis-server --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$RUN_DIR" \
  --daemonize no >"$RUN_DIR/redis.log" 2>&1 &
REDIS_PID=$!
for _ in $(seq 100); do
  redis-cli -p "$PORT" ping >/dev/null 2>&1 && break
  sleep 0.05
done
redis-cli -p "$PORT" ping >/dev/null

/usr/bin/python3 - "$PORT" "$N" "$ROUNDS" "$SHARDBENCH_BIN" <<'PY'
import csv, io, os, subprocess, sys, tempfile, threading

port, n1, rounds, shardbench = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
tick = os.sysconf("SC_CLK_TCK")
common = ["-h", "127.0.0.1", "-p", port, "-c", "50", "-d", "256", "-t", "set,get", "--csv"]

def tools(p, n):
    flags = common + ["-P", str(p), "-n", str(n)]
    return {
        "redis-benchmark": ["redis-benchmark"] + flags,  # single-threaded unless --threads
        "shardbench": [shardbench, "--threads", "1", "--no-progress"] + flags,
    }

def run_measured(argv, timeout=120):
    """Runs argv; returns (stdout, cpu seconds). utime+stime come from /proc/<pid>/stat after the
    exit but before the reap (WNOWAIT leaves a zombie whose stat holds its final times), so the
    whole run is counted."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        p = subprocess.Popen(argv, stdout=out, stderr=err, text=True)
        killer = threading.Timer(timeout, p.kill)  # bounded: a hung client is killed
        killer.start()
        os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOWAIT)
        killer.cancel()
        with open("/proc/%d/stat" % p.pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        cpu = (int(fields[11]) + int(fields[12])) / tick  # utime, stime (fields 14 and 15)
        p.wait()
        out.seek(0)
        err.seek(0)
        text = out.read()
        if p.returncode != 0:
            raise SystemExit("bench-clients: %s exited %d:\n%s%s" % (argv[0], p.returncode, text, err.read()))
        return text, cpu

def qps(csv_text):
    rows = {}
    for row in csv.reader(io.StringIO(csv_text)):
        if len(row) >= 2 and row[0] in ("SET", "GET"):
            rows[row[0]] = float(row[1])
    return rows

results = {}
for p, n in ((1, n1), (16, n1 * 5)):
    for r in range(rounds):
        order = list(tools(p, n).items())
        if r % 2:
            order.reverse()
        for name, argv in order:
            out, cpu = run_measured(argv)
            q = qps(out)
            if set(q) != {"SET", "GET"}:
                raise SystemExit("bench-clients: no SET/GET rows from %s:\n%s" % (name, out))
            us = cpu * 1e6 / (2 * n)
            best = results.get((p, name))
            if best is None or us < best[2]:
                results[(p, name)] = (q["SET"], q["GET"], us)

print("| client | pipeline | SET QPS | GET QPS | client CPU µs/request |")
print("|---|---:|---:|---:|---:|")
for p in (1, 16):
    for name in ("redis-benchmark", "shardbench"):
        s, g, us = results[(p, name)]
        print("| %s | %d | %.0f | %.0f | %.2f |" % (name, p, s, g, us))
print()
ok = True
for p in (1, 16):
    ratio = results[(p, "shardbench")][2] / results[(p, "redis-benchmark")][2]
    verdict = "ok" if ratio <= 0.8 else "ABOVE 0.8"
    ok = ok and ratio <= 0.8
    print("pipeline %2d: shardbench / redis-benchmark CPU per request = %.2f (%s)" % (p, ratio, verdict))
print()
print("requests per test: %d at pipeline 1, %d at pipeline 16; best of %d rounds per tool" % (n1, n1 * 5, rounds))
sys.exit(0 if ok else 1)
PY
