#!/usr/bin/env bash
# Benchmarks shardproxy against its peer twemproxy (Debian's nutcracker) and one redis-server,
# all in one run on this machine: redis-benchmark -t set,get -d 256 -r 100000 -c 50 -n N, once
# plain and once with -P 16. Prints QPS and CPU microseconds per request for each proxy process
# (utime+stime from /proc/<pid>/stat over the run, divided by the requests), the shards' own CPU
# per request (summed over the 4 redis-servers), the ratio shardproxy/twemproxy and the ratio of
# shardproxy's CPU to redis-server's own when it serves the same load directly, as Markdown.
# The three targets run in turn, ROUNDS times (default 5), so machine drift hits all of them
# alike; the table shows medians over the rounds, and the ratio line the median of the per-round
# ratios with their range. A run whose shardproxy logged a backend timeout or ejection is flagged.
# With --baseline BIN, a second shardproxy (another build, e.g. the one before a change) serves
# the same shards as a fourth target, and a ratio line compares the two builds' CPU per request.
#
#   tools/bench-peers.sh [-n REQUESTS_PER_TEST] [-r ROUNDS] [--baseline BIN]
#                        (defaults 100000, 5; a few minutes)
#
# Uses build/proxy/shardproxy (SP_BUILD_DIR or SHARDPROXY_BIN to override), building it (Release)
# when missing. Everything it starts is stopped by PID on exit.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
N=100000
ROUNDS=5
BASELINE=""
while [ $# -gt 0 ]; do
  case "$1" in
    -n) N="$2"; shift ;;
    -r) ROUNDS="$2"; shift ;;
    --baseline) BASELINE="${2:-}"; shift ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "bench-peers: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
[[ "$N" =~ ^[1-9][0-9]*$ && "$ROUNDS" =~ ^[1-9][0-9]*$ ]] ||
  { echo "bench-peers: -n and -r take positive integers" >&2; exit 2; }
[ -z "$BASELINE" ] || [ -x "$BASELINE" ] ||
  { echo "bench-peers: --baseline $BASELINE is not an executable" >&2; exit 2; }

BUILD_DIR="${SP_BUILD_DIR:-build}"
case "$BUILD_DIR" in /*) ;; *) BUILD_DIR="$ROOT/$BUILD_DIR" ;; esac
export SHARDPROXY_BIN="${SHARDPROXY_BIN:-$BUILD_DIR/proxy/shardproxy}"
for tool in redis-server redis-benchmark nutcracker; do
  command -v "$tool" >/dev/null || { echo "bench-peers: $tool missing (tools/install-deps.sh)" >&2; exit 1; }
done
if [ ! -x "$SHARDPROXY_BIN" ]; then
  cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$BUILD_DIR" --target shardproxy -j"$(nproc)" | tail -n 1
fi

export SP_RUN_DIR="$(mktemp -d /tmp/shardproxy-bench.XXXXXX)"
NC_PID=""
BASE_PID=""
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  local pid
  for pid in "$NC_PID" "$BASE_PID"; do
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
      kill -TERM "$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
    fi
  done
  tools/local-shards.sh stop >/dev/null || true
  rm -rf "$SP_RUN_DIR"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

free_port() {
  /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

tools/local-shards.sh start 4 --proxy --workers 1 >/dev/null
SP_PORT="$(cat "$SP_RUN_DIR/proxy.port")"
SP_PID="$(cat "$SP_RUN_DIR/proxy.pid")"
SHARD_PIDS=()
SHARD_PORTS=()
for i in 0 1 2 3; do
  SHARD_PIDS+=("$(cat "$SP_RUN_DIR/shard$i.pid")")
  SHARD_PORTS+=("$(cat "$SP_RUN_DIR/shard$i.port")")
done

# twemproxy over the same 4 shards: one connection per shard, crc16 over the {hash tag}, modula.
NC_PORT="$(free_port)"
NC_STATS_PORT="$(free_port)"
{
  echo "shardproxy_peers:"
  echo "  listen: 127.0.0.1:$NC_PORT"
  echo "  hash: crc16"
  echo "  hash_tag: \"{}\""
  echo "  distribution: modula"
  echo "  redis: true"
  echo "  server_connections: 1"
  echo "  auto_eject_hosts: false"
  echo "  preconnect: true"
  echo "  timeout: 5000"
  echo "  servers:"
  for i in 0 1 2 3; do
    echo "   - 127.0.0.1:${SHARD_PORTS[$i]}:1 shard$i"
  done
} >"$SP_RUN_DIR/nutcracker.yml"
nutcracker -t -c "$SP_RUN_DIR/nutcracker.yml" >/dev/null 2>&1 ||
  { echo "bench-peers: nutcracker rejects its config" >&2; cat "$SP_RUN_DIR/nutcracker.yml" >&2; exit 1; }
nutcracker -c "$SP_RUN_DIR/nutcracker.yml" -a 127.0.0.1 -s "$NC_STATS_PORT" \
  -p "$SP_RUN_DIR/nutcracker.pid" -o "$SP_RUN_DIR/nutcracker.log" </dev/null &
NC_PID=$!
for _ in $(seq 1 100); do
  redis-cli -h 127.0.0.1 -p "$NC_PORT" SET bench:probe 1 2>/dev/null | grep -q OK && break
  sleep 0.1
done
redis-cli -h 127.0.0.1 -p "$NC_PORT" GET bench:probe 2>/dev/null | grep -q 1 ||
  { echo "bench-peers: twemproxy did not start" >&2; cat "$SP_RUN_DIR/nutcracker.log" >&2; exit 1; }

TARGETS=(shardproxy twemproxy "redis-server (direct)")
if [ -n "$BASELINE" ]; then
  # The other build, over the same shards with the same settings as local-shards.sh's proxy.
  BASE_PORT="$(free_port)"
  "$BASELINE" --listen 127.0.0.1 --port "$BASE_PORT" --workers 1 --shards "$(cat "$SP_RUN_DIR/shards")" \
    --log-level warn >"$SP_RUN_DIR/baseline.log" 2>&1 </dev/null &
  BASE_PID=$!
  for _ in $(seq 1 100); do
    redis-cli -h 127.0.0.1 -p "$BASE_PORT" PING 2>/dev/null | grep -q PONG && break
    sleep 0.1
  done
  redis-cli -h 127.0.0.1 -p "$BASE_PORT" PING 2>/dev/null | grep -q PONG ||
    { echo "bench-peers: the baseline shardproxy did not start" >&2; cat "$SP_RUN_DIR/baseline.log" >&2; exit 1; }
  TARGETS=(shardproxy "shardproxy (baseline)" twemproxy "redis-server (direct)")
fi

TCK="$(getconf CLK_TCK)"
ticks() {  # pids... -> utime+stime summed, in clock ticks
  local total=0 pid f
  for pid in "$@"; do
    # Fields after the ")" of the command name: state is $1, utime is $12, stime is $13.
    f="$(sed 's/.*) //' "/proc/$pid/stat")"
    total=$((total + $(echo "$f" | awk '{print $12 + $13}')))
  done
  echo "$total"
}
us_per_req() {  # ticks requests -> microseconds per request, 2 decimals
  awk -v t="$1" -v r="$2" -v hz="$TCK" 'BEGIN { printf "%.2f", t * 1e6 / hz / r }'
}

declare -A SAMPLES  # "target/pipe/field" -> space-separated values, one per round
add() { SAMPLES["$1"]="${SAMPLES["$1"]:-} $2"; }
median() {  # values... -> their median
  printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END {
    if (NR == 0) { print "?"; exit }
    if (NR % 2) print a[(NR + 1) / 2]; else printf "%.2f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
run() {  # name port pid pipeline
  local name="$1" port="$2" pid="$3" pipe="$4"
  local p0 s0 p1 s1 out set get
  p0=0
  [ "$pid" != "-" ] && p0="$(ticks "$pid")"
  s0="$(ticks "${SHARD_PIDS[@]}")"
  out="$(timeout --foreground 300 redis-benchmark -h 127.0.0.1 -p "$port" -t set,get -d 256 \
    -r 100000 -c 50 -n "$N" -P "$pipe" -q 2>/dev/null | tr '\r' '\n')"
  s1="$(ticks "${SHARD_PIDS[@]}")"
  p1=0
  [ "$pid" != "-" ] && p1="$(ticks "$pid")"
  set="$(echo "$out" | awk '/^SET: .*requests per second/ {print $2}' | tail -n 1)"
  get="$(echo "$out" | awk '/^GET: .*requests per second/ {print $2}' | tail -n 1)"
  local reqs=$((2 * N))
  add "$name/$pipe/set" "${set:-0}"
  add "$name/$pipe/get" "${get:-0}"
  add "$name/$pipe/shards" "$(us_per_req $((s1 - s0)) $reqs)"
  [ "$pid" != "-" ] && add "$name/$pipe/cpu" "$(us_per_req $((p1 - p0)) $reqs)"
  return 0
}

echo "bench-peers: redis-benchmark -t set,get -d 256 -r 100000 -c 50 -n $N [-P 16], $ROUNDS" \
  "rounds, against shardproxy (1 worker), twemproxy and one shard; 4 shards, $(nproc) cores" >&2
for pipe in 1 16; do
  for ((round = 1; round <= ROUNDS; round++)); do
    run shardproxy "$SP_PORT" "$SP_PID" "$pipe"
    [ -z "$BASELINE" ] || run "shardproxy (baseline)" "$BASE_PORT" "$BASE_PID" "$pipe"
    run twemproxy "$NC_PORT" "$NC_PID" "$pipe"
    run "redis-server (direct)" "${SHARD_PORTS[0]}" - "$pipe"
    echo "bench-peers: -P $pipe round $round/$ROUNDS done" >&2
  done
done

echo
echo "| target | -P | SET req/s | GET req/s | proxy CPU µs/req | shards CPU µs/req |"
echo "|---|---:|---:|---:|---:|---:|"
for pipe in 1 16; do
  for name in "${TARGETS[@]}"; do
    # shellcheck disable=SC2086  # the samples are space-separated numbers
    cpu="—"
    [ -n "${SAMPLES["$name/$pipe/cpu"]:-}" ] && cpu="$(median ${SAMPLES["$name/$pipe/cpu"]})"
    # shellcheck disable=SC2086
    echo "| $name | $pipe | $(median ${SAMPLES["$name/$pipe/set"]}) |" \
      "$(median ${SAMPLES["$name/$pipe/get"]}) | $cpu | $(median ${SAMPLES["$name/$pipe/shards"]}) |"
  done
done
echo
ratio_line() {  # target-a target-b label pipeline [b-field]: median and range of per-round ratios
  local a b i lo hi ratios=()
  # shellcheck disable=SC2206  # the samples are space-separated numbers
  a=(${SAMPLES["$1/$4/cpu"]})
  # shellcheck disable=SC2206  # b-field "shards": the CPU of the shards that served b (direct)
  b=(${SAMPLES["$2/$4/${5:-cpu}"]})
  for ((i = 0; i < ${#a[@]}; i++)); do
    ratios+=("$(awk -v a="${a[$i]}" -v b="${b[$i]}" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "0" }')")
  done
  lo="$(printf '%s\n' "${ratios[@]}" | sort -g | head -n 1)"
  hi="$(printf '%s\n' "${ratios[@]}" | sort -g | tail -n 1)"
  echo "CPU per request, $3 at -P $4: median $(median "${ratios[@]}")" \
    "over $ROUNDS rounds (range $lo to $hi)"
}
for pipe in 1 16; do
  ratio_line shardproxy twemproxy "shardproxy/twemproxy" "$pipe"
  [ -z "$BASELINE" ] || ratio_line shardproxy "shardproxy (baseline)" "shardproxy/baseline ($BASELINE)" "$pipe"
  ratio_line shardproxy "redis-server (direct)" \
    "shardproxy/redis-server's own CPU serving the load directly" "$pipe" shards
done
if grep -qE "timeout after|ejected|down:" "$SP_RUN_DIR/proxy.log"; then
  echo
  echo "WARNING: shardproxy logged backend failures during the run; its numbers are suspect:"
  grep -E "timeout after|ejected|down:" "$SP_RUN_DIR/proxy.log" | head -n 3
fi
echo
echo "Command: tools/bench-peers.sh -n $N -r $ROUNDS${BASELINE:+ --baseline $BASELINE} ($(date -u +%Y-%m-%d), $(nproc) cores; client, proxies and shards share them)"
