#!/usr/bin/env bash
# What many client connections cost shardproxy per request: CPU per request and resident memory
# with C1 connections and with C2 (default 1,000 and 16,000), in one run on this machine, with
# twemproxy (Debian's nutcracker) over the same shards beside it. Starts 4 redis-server shards
# and one shardproxy (1 worker) with tools/local-shards.sh, and nutcracker; each load is shardbench
# with 2 client threads, -t set,get -d 256 -r 100000, pipeline 1 (bounded by --time-limit).
# CPU per request is MARGINAL, so that opening and closing the connections does not count: at
# each connection count the proxy serves a short run (one SET and one GET per connection) and a
# long one (-n REQUESTS), and the difference of its CPU time (utime+stime of /proc/PID/stat, all
# threads) is divided by the difference of the requests. RSS is the largest seen while the long
# run's connections are open. The connection counts and the proxies run in turn, ROUNDS times,
# so machine drift hits all of them alike. Prints a Markdown table of medians (min-max) and, per
# proxy, the median and range of the per-round ratio CPU/request at C2 over C1.
#
#   tools/bench-connections.sh [-r ROUNDS] [--connections C1,C2] [-n REQUESTS] [--bin PATH]
#                              (defaults 3, 1000,16000, 200000; about 3 minutes)
#
# Needs an open-files limit above C2 + 100 (raised to the hard limit when it is lower). Uses
# build-dev/proxy/shardproxy and build-dev/bench/shardbench unless --bin / SHARDBENCH_BIN say
# otherwise. Everything it starts is stopped by PID on exit.
case "${1:-}" in -h | --help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
ROUNDS=3
CONNS="1000,16000"
N=200000
TIME_LIMIT=60
BIN="${SHARDPROXY_BIN:-$ROOT/build-dev/proxy/shardproxy}"
BENCH="${SHARDBENCH_BIN:-$ROOT/build-dev/bench/shardbench}"
die() { echo "bench-connections: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    -r) ROUNDS="${2:-}"; shift ;;
    --connections) CONNS="${2:-}"; shift ;;
    -n) N="${2:-}"; shift ;;
    --bin) BIN="${2:-}"; shift ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
  shift
done
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ && "$N" =~ ^[1-9][0-9]*$ ]] || die "-r and -n take positive integers"
[[ "$CONNS" =~ ^[1-9][0-9]*,[1-9][0-9]*$ ]] || die "--connections takes C1,C2"
C1="${CONNS%,*}"
C2="${CONNS#*,}"
[ "$N" -gt "$C2" ] || die "-n must be larger than the connection counts (the short run's requests)"
[ -x "$BIN" ] || die "no shardproxy binary at $BIN (build it, or pass --bin)"
[ -x "$BENCH" ] || die "no shardbench binary at $BENCH (build it, or set SHARDBENCH_BIN)"
command -v nutcracker >/dev/null || die "nutcracker missing (tools/install-deps.sh)"
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
[ "$(ulimit -n)" = unlimited ] || [ "$(ulimit -n)" -gt $((C2 + 100)) ] ||
  die "the open-files limit $(ulimit -n) is too low for $C2 connections"

export SHARDPROXY_BIN="$BIN"
export SP_RUN_DIR="$(mktemp -d /tmp/shardproxy-conns.XXXXXX)"
export SP_TWEMPROXY_DIR="$SP_RUN_DIR/twemproxy"
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  tools/twemproxy.sh stop >/dev/null 2>&1 || true
  tools/local-shards.sh stop >/dev/null || true
  rm -rf "$SP_RUN_DIR"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

tools/local-shards.sh start 4 --proxy --workers 1 >/dev/null
SP_PORT="$(cat "$SP_RUN_DIR/proxy.port")"
SP_PID="$(cat "$SP_RUN_DIR/proxy.pid")"
NC_ADDR="$(tools/twemproxy.sh start "$(cat "$SP_RUN_DIR/shards")")"
NC_PORT="${NC_ADDR##*:}"
NC_PID="$(cat "$SP_TWEMPROXY_DIR/pid")"

TCK="$(getconf CLK_TCK)"
ticks() { sed 's/.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'; }
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }

declare -A SAMPLES  # "proxy/conns/field" -> space-separated values, one per round
add() { SAMPLES["$1"]="${SAMPLES["$1"]:-} $2"; }
median() {
  printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END {
    if (NR == 0) { print "?"; exit }
    if (NR % 2) print a[(NR + 1) / 2]; else printf "%.2f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
spread() {  # values... -> "median (min–max)"
  local sorted
  sorted="$(printf '%s\n' "$@" | sort -g)"
  echo "$(median "$@") ($(echo "$sorted" | head -n 1)–$(echo "$sorted" | tail -n 1))"
}
load() {  # port connections requests: one shardbench run, SET and GET, `requests` of each
  "$BENCH" -p "$1" --threads 2 -c "$2" -n "$3" -t set,get -d 256 -r 100000 \
    --time-limit "$TIME_LIMIT" --connect-timeout 20000 -q 2>&1
}
run() {  # name port pid connections
  local name="$1" port="$2" pid="$3" conns="$4" t0 t1 t2 peak=0 out sampler
  t0="$(ticks "$pid")"
  out="$(load "$port" "$conns" "$conns")" ||
    { echo "bench-connections: $name at $conns (short run): $out" >&2; exit 1; }
  t1="$(ticks "$pid")"
  # The RSS while the connections are open: sampled every 0.2 s, the largest kept.
  (while kill -0 "$pid" 2>/dev/null; do rss_kib "$pid"; sleep 0.2; done) >"$SP_RUN_DIR/rss" &
  sampler=$!
  out="$(load "$port" "$conns" "$N")" ||
    { kill "$sampler" 2>/dev/null; echo "bench-connections: $name at $conns: $out" >&2; exit 1; }
  kill "$sampler" 2>/dev/null || true
  wait "$sampler" 2>/dev/null || true
  t2="$(ticks "$pid")"
  peak="$(sort -n "$SP_RUN_DIR/rss" | tail -n 1)"
  add "$name/$conns/cpu" "$(awk -v t=$(((t2 - t1) - (t1 - t0))) -v r=$((2 * (N - conns))) -v hz="$TCK" \
    'BEGIN { printf "%.2f", t * 1e6 / hz / r }')"
  add "$name/$conns/rss" "$(awk -v k="${peak:-0}" 'BEGIN { printf "%.1f", k / 1024 }')"
}

echo "bench-connections: shardbench --threads 2 -t set,get -d 256 -r 100000 -n $N at $C1 and" \
  "$C2 connections, $ROUNDS rounds; shardproxy (1 worker) and twemproxy over 4 shards" >&2
for ((round = 1; round <= ROUNDS; round++)); do
  for conns in "$C1" "$C2"; do
    run shardproxy "$SP_PORT" "$SP_PID" "$conns"
    run twemproxy "$NC_PORT" "$NC_PID" "$conns"
  done
  echo "bench-connections: round $round/$ROUNDS done" >&2
done

echo
echo "| proxy | connections | CPU µs/request (marginal) | RSS while open (MiB) |"
echo "|---|--:|--:|--:|"
for name in shardproxy twemproxy; do
  for conns in "$C1" "$C2"; do
    # shellcheck disable=SC2086  # the samples are space-separated numbers
    echo "| $name | $conns | $(spread ${SAMPLES["$name/$conns/cpu"]}) | $(spread ${SAMPLES["$name/$conns/rss"]}) |"
  done
done
echo
for name in shardproxy twemproxy; do
  # shellcheck disable=SC2206
  a=(${SAMPLES["$name/$C2/cpu"]})
  # shellcheck disable=SC2206
  b=(${SAMPLES["$name/$C1/cpu"]})
  ratios=()
  for ((i = 0; i < ${#a[@]}; i++)); do
    ratios+=("$(awk -v a="${a[$i]}" -v b="${b[$i]}" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "0" }')")
  done
  echo "CPU per request, $name at $C2 over $C1 connections: $(spread "${ratios[@]}") over $ROUNDS rounds"
done
echo
echo "Command: tools/bench-connections.sh -r $ROUNDS --connections $CONNS -n $N ($(date -u +%Y-%m-%d), $(nproc) cores; client, proxies and shards share them)"
