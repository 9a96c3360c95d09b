#!/usr/bin/env bash
# What the kernel does per request for shardproxy at C1 and C2 client connections (default
# 1,000 and 16,000), counted rather than timed: io_uring completions and submissions, receives
# that found no buffer left (-ENOBUFS, each re-armed after the turn), system calls and context
# switches, from kernel tracepoints (`perf stat -e io_uring:...,raw_syscalls:sys_enter,...` on the
# proxy's PID). Starts 4 redis-server shards and one shardproxy (1 worker) with
# tools/local-shards.sh; each load is shardbench with 2 client threads, -t set,get -d 256
# -r 100000, pipeline 1. Counts are MARGINAL: at each connection count the proxy serves a short
# run (one SET and one GET per connection) and a long one (-n REQUESTS), each under its own perf,
# and the difference of the counts is divided by the difference of the requests, so opening and
# closing the connections does not count.
#
#   tools/trace-connections.sh [--connections C1,C2] [-n REQUESTS] [--bin PATH]
#                              (defaults 1000,16000, 200000; about 2 minutes)
#
# Needs perf (linux-perf) and tracepoint access (root, or kernel.perf_event_paranoid <= -1), and
# an open-files limit above C2 + 100. Uses build-dev/proxy/shardproxy and build-dev/bench/shardbench
# unless --bin / SHARDBENCH_BIN say otherwise. Everything it starts is stopped by PID on exit.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=build-dev/proxy/shardproxy
BENCH="${SHARDBENCH_BIN:-build-dev/bench/shardbench}"
CONNS=1000,16000
N=200000
die() { echo "trace-connections: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
  case "$1" in
    --connections) CONNS="${2:?}"; shift ;;
    -n) N="${2:?}"; shift ;;
    --bin) BIN="${2:?}"; shift ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
  shift
done
[[ "$CONNS" =~ ^[1-9][0-9]*,[1-9][0-9]*$ && "$N" =~ ^[1-9][0-9]*$ ]] ||
  die "--connections takes C1,C2 and -n a positive integer"
C1="${CONNS%,*}"
C2="${CONNS#*,}"
[ "$N" -gt "$C2" ] || die "-n must be larger than the connection counts (the short run's requests)"
[ -x "$BIN" ] || die "no shardproxy binary at $BIN (build it, or pass --bin)"
[ -x "$BENCH" ] || die "no shardbench binary at $BENCH (build it, or set SHARDBENCH_BIN)"
command -v perf >/dev/null || die "perf missing (apt-get install linux-perf)"
perf stat -e raw_syscalls:sys_enter true >/dev/null 2>&1 ||
  die "perf cannot read tracepoints here (run as root, or lower kernel.perf_event_paranoid)"
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
[ "$(ulimit -n)" = unlimited ] || [ "$(ulimit -n)" -gt $((C2 + 100)) ] ||
  die "the open-files limit $(ulimit -n) is too low for $C2 connections"

export SHARDPROXY_BIN="$BIN"
SP_RUN_DIR="$(mktemp -d /tmp/shardproxy-trace.XXXXXX)"
export SP_RUN_DIR
PERF_PID=""
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  [ -n "$PERF_PID" ] && kill -INT "$PERF_PID" 2>/dev/null && wait "$PERF_PID" 2>/dev/null
  tools/local-shards.sh stop >/dev/null || true
  rm -rf "$SP_RUN_DIR"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

tools/local-shards.sh start 4 --proxy --workers 1 >/dev/null
PORT="$(cat "$SP_RUN_DIR/proxy.port")"
PID="$(cat "$SP_RUN_DIR/proxy.pid")"

EVENTS=(io_uring:io_uring_complete io_uring:io_uring_submit_req io_uring:io_uring_poll_arm
  io_uring:io_uring_cqe_overflow raw_syscalls:sys_enter sched:sched_switch)
load() {  # connections requests: one shardbench run, SET and GET, `requests` of each
  "$BENCH" -p "$PORT" --threads 2 -c "$1" -n "$2" -t set,get -d 256 -r 100000 \
    --time-limit 300 --connect-timeout 20000 -q >/dev/null 2>&1 ||
    die "shardbench at $1 connections failed"
}
counted() {  # connections requests out: the counts of one load, as event,count lines
  local args=() e
  for e in "${EVENTS[@]}"; do args+=(-e "$e"); done
  # The receives that ended for want of a buffer, as a separate event with a filter.
  args+=(-e io_uring:io_uring_complete --filter 'res == -105')
  perf stat -x, "${args[@]}" -p "$PID" -o "$3.raw" &
  PERF_PID=$!
  sleep 0.5
  load "$1" "$2"
  kill -INT "$PERF_PID"
  wait "$PERF_PID" || true
  PERF_PID=""
  # perf -x, lines: count,unit,event,...; the filtered event comes last under the same name.
  awk -F, '!/^#/ && NF > 3 { n[$3]++; name = (n[$3] > 1) ? "receives out of buffers (-ENOBUFS)" : $3;
    print name "," $1 }' "$3.raw" >"$3"
}

echo "trace-connections: shardbench --threads 2 -t set,get -d 256 -r 100000 -n $N at $C1 and" \
  "$C2 connections; shardproxy (1 worker) over 4 shards" >&2
for conns in "$C1" "$C2"; do
  counted "$conns" "$conns" "$SP_RUN_DIR/short-$conns"
  counted "$conns" "$N" "$SP_RUN_DIR/long-$conns"
done

echo
echo "| per request (marginal) | $C1 connections | $C2 connections |"
echo "|---|--:|--:|"
awk -F, -v c1="$C1" -v c2="$C2" -v n="$N" '
  { key = FILENAME; sub(/.*\//, "", key); v[key SUBSEP $1] = $2; if (!($1 in seen)) { seen[$1] = 1; order[++k] = $1 } }
  END {
    for (i = 1; i <= k; i++) {
      e = order[i]
      a = (v["long-" c1 SUBSEP e] - v["short-" c1 SUBSEP e]) / (2 * (n - c1))
      b = (v["long-" c2 SUBSEP e] - v["short-" c2 SUBSEP e]) / (2 * (n - c2))
      printf "| %s | %.3f | %.3f |\n", e, a, b
    }
  }' "$SP_RUN_DIR/short-$C1" "$SP_RUN_DIR/long-$C1" "$SP_RUN_DIR/short-$C2" "$SP_RUN_DIR/long-$C2"
echo
echo "The proxy's $(redis-cli -p "$PORT" INFO server | tr -d '\r' | grep '^socket_read_api:')" \
  "($("$BIN" --version 2>/dev/null | head -n 1))"
echo "Command: tools/trace-connections.sh --connections $C1,$C2 -n $N ($(date +%F), $(nproc) cores)"
