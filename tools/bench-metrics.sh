#!/usr/bin/env bash
# What metrics cost on the request path: builds shardproxy twice (Release, -DSHARDPROXY_METRICS=ON
# and OFF, in build-bench-metrics-on/ and build-bench-metrics-off/), starts 4 local redis-server
# shards, then alternates runs of the same redis-benchmark load through each variant (ROUNDS
# each, the order flipped every round so drift hits both), and prints every run, the median QPS
# of each variant and the ratio on/off. The "on" proxy serves /metrics and is scraped every
# second while it runs, as Prometheus would. The bar is a QPS ratio >= 0.98. On a
# shared, noisy machine the proxy's CPU time per request (utime+stime from /proc over the run)
# is the steadier measure of the same cost, so it is printed too (ratio on/off <= 1.02), and,
# when valgrind is installed, the proxy's instructions per request counted by callgrind (the
# difference between a short and a long run of the same load, so start-up cancels out), which
# other tenants of the machine cannot disturb (INSTRUCTIONS=0 skips it).
#
# Usage: tools/bench-metrics.sh            (env: ROUNDS=21 REQUESTS=400000 PIPELINE=16 CLIENTS=50
#                                           WORKERS=1 JOBS=2 SKIP_BUILD=0 INSTRUCTIONS=1)
# The callgrind runs use --metrics-listen off for both binaries: they count the request path
# only (what SHARDPROXY_METRICS compiles in or out), not the scrapes.
# Numbers from this script on a shared machine are only meaningful as the ratio of one run.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ROUNDS="${ROUNDS:-21}"
REQUESTS="${REQUESTS:-400000}"
PIPELINE="${PIPELINE:-16}"
CLIENTS="${CLIENTS:-50}"
WORKERS="${WORKERS:-1}"
JOBS="${JOBS:-2}"
SHARDS=4
TMP="$(mktemp -d /tmp/sp-bench-metrics.XXXXXX)"
PIDS=()

cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in "${PIDS[@]}"; do
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
  /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

wait_port() {  # port pid [tries of 20 ms, default 300]
  local i
  for i in $(seq 1 "${3:-300}"); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then
      return 0
    fi
    kill -0 "$2" 2>/dev/null || return 1
    sleep 0.02
  done
  return 1
}

build() {  # variant ON|OFF
  local dir="$ROOT/build-bench-metrics-${1,,}"
  if ! { cmake -S "$ROOT" -B "$dir" -DCMAKE_BUILD_TYPE=Release -DSHARDPROXY_TESTS=OFF \
           -DSHARDPROXY_METRICS="$1" &&
         cmake --build "$dir" -j"$JOBS" --target shardproxy; } >"$TMP/build-$1.log" 2>&1; then
    tail -n 30 "$TMP/build-$1.log" >&2
    echo "bench-metrics: build with SHARDPROXY_METRICS=$1 failed" >&2
    exit 1
  fi
  echo "$dir/proxy/shardproxy"
}

if [ "${SKIP_BUILD:-0}" != 1 ]; then
  echo "bench-metrics: building Release with metrics on and off (-j$JOBS)..."
fi
BIN_ON="$ROOT/build-bench-metrics-on/proxy/shardproxy"
BIN_OFF="$ROOT/build-bench-metrics-off/proxy/shardproxy"
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  BIN_ON="$(build ON)"
  BIN_OFF="$(build OFF)"
fi

SHARD_LIST=""
for i in $(seq 1 $SHARDS); do
  port="$(free_port)"
  mkdir -p "$TMP/shard$i"
  redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$TMP/shard$i" \
    --daemonize no >"$TMP/shard$i.log" 2>&1 &
  PIDS+=($!)
  wait_port "$port" $! || { echo "bench-metrics: redis-server did not start" >&2; exit 1; }
  SHARD_LIST+="${SHARD_LIST:+,}127.0.0.1:$port"
done

cpu_ticks() {  # pid -> utime + stime in clock ticks
  awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"
}

run_one() {  # variant binary -> prints "QPS CPU-us-per-request" (SET and GET together)
  local variant="$1" bin="$2" port metrics_flag scraper="" proxy qps
  port="$(free_port)"
  if [ "$variant" = on ]; then
    local mport
    mport="$(free_port)"
    metrics_flag="127.0.0.1:$mport"
  else
    metrics_flag="off"
  fi
  "$bin" --port "$port" --workers "$WORKERS" --shards "$SHARD_LIST" --metrics-listen "$metrics_flag" \
    --log-level warn >"$TMP/proxy-$variant.log" 2>&1 &
  proxy=$!
  wait_port "$port" $proxy || { echo "bench-metrics: proxy did not start" >&2; cat "$TMP/proxy-$variant.log" >&2; exit 1; }
  if [ "$variant" = on ]; then
    /usr/bin/python3 - "$mport" <<'PY' &
import sys, time, urllib.request
url = "http://127.0.0.1:%s/metrics" % sys.argv[1]
while True:
    try:
        urllib.request.urlopen(url, timeout=5).read()
    except OSError:
        pass
    time.sleep(1)
PY
    scraper=$!
  fi
  local t0 t1
  t0="$(cpu_ticks "$proxy")"
  qps="$(redis-benchmark -p "$port" -t set,get -n "$REQUESTS" -P "$PIPELINE" -c "$CLIENTS" -d 256 \
          -r 100000 --csv 2>/dev/null |
        awk -F'","' 'NR > 1 { gsub(/"/, "", $2); sum += $2; n++ } END { if (n) printf "%.0f", sum / n }')"
  t1="$(cpu_ticks "$proxy")"
  [ -n "$scraper" ] && { kill "$scraper" 2>/dev/null || true; wait "$scraper" 2>/dev/null || true; }
  kill "$proxy" 2>/dev/null || true
  wait "$proxy" 2>/dev/null || true
  awk -v q="${qps:-0}" -v t="$((t1 - t0))" -v hz="$(getconf CLK_TCK)" -v n="$((2 * REQUESTS))" \
    'BEGIN { printf "%s %.3f\n", q, t / hz * 1e6 / n }'
}

# Sets IR to the instructions per request of binary $1 (callgrind). Runs in this shell, not in
# $(...), so that the valgrind process is in PIDS for cleanup.
instructions_per_request() {
  local bin="$1" n ir=() port proxy out
  for n in 10000 40000; do
    port="$(free_port)"
    out="$TMP/callgrind.$n.out"
    valgrind --tool=callgrind --callgrind-out-file="$out" "$bin" --port "$port" --workers 1 \
      --shards "$SHARD_LIST" --metrics-listen off --log-level warn >"$TMP/valgrind.log" 2>&1 &
    proxy=$!
    PIDS+=("$proxy")
    wait_port "$port" $proxy 3000 ||
      { echo "bench-metrics: proxy under valgrind did not start" >&2; cat "$TMP/valgrind.log" >&2; exit 1; }
    redis-benchmark -p "$port" -t set,get -n "$n" -P "$PIPELINE" -c 1 -d 256 -r 100000 -q \
      >/dev/null 2>&1
    kill "$proxy"
    wait "$proxy" 2>/dev/null || true
    ir+=("$(awk '/^totals:/ { print $2 }' "$out")")
    [ -n "${ir[-1]}" ] || { echo "bench-metrics: no callgrind totals in $out" >&2; exit 1; }
  done
  IR="$(awk -v a="${ir[0]}" -v b="${ir[1]}" 'BEGIN { printf "%.0f", (b - a) / (2 * 30000) }')"
}

median() {
  sort -g | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else printf "%.3f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

echo "bench-metrics: $ROUNDS rounds of redis-benchmark -t set,get -n $REQUESTS -P $PIPELINE" \
  "-c $CLIENTS -d 256 -r 100000 through shardproxy ($WORKERS worker, $SHARDS shards)"
ON=()
OFF=()
CPU_ON=()
CPU_OFF=()
for r in $(seq 1 "$ROUNDS"); do
  if [ $((r % 2)) -eq 1 ]; then order=(on off); else order=(off on); fi
  for v in "${order[@]}"; do
    if [ "$v" = on ]; then
      read -r q c < <(run_one on "$BIN_ON")
      ON+=("$q")
      CPU_ON+=("$c")
    else
      read -r q c < <(run_one off "$BIN_OFF")
      OFF+=("$q")
      CPU_OFF+=("$c")
    fi
    printf "  round %d  metrics %-3s  %8s QPS  %6s us CPU/request\n" "$r" "$v" "$q" "$c"
  done
done
MED_ON="$(printf '%s\n' "${ON[@]}" | median)"
MED_OFF="$(printf '%s\n' "${OFF[@]}" | median)"
RATIO="$(awk -v a="$MED_ON" -v b="$MED_OFF" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }')"
CMED_ON="$(printf '%s\n' "${CPU_ON[@]}" | median)"
CMED_OFF="$(printf '%s\n' "${CPU_OFF[@]}" | median)"
CRATIO="$(awk -v a="$CMED_ON" -v b="$CMED_OFF" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }')"
echo "bench-metrics: median QPS metrics on $MED_ON, off $MED_OFF, ratio on/off $RATIO" \
  "(bar: >= 0.98)"
echo "bench-metrics: median proxy CPU per request on $CMED_ON us, off $CMED_OFF us," \
  "ratio on/off $CRATIO (bar: <= 1.02)"
if [ "${INSTRUCTIONS:-1}" = 1 ] && command -v valgrind >/dev/null; then
  instructions_per_request "$BIN_ON"
  IR_ON="$IR"
  instructions_per_request "$BIN_OFF"
  IR_OFF="$IR"
  IR_RATIO="$(awk -v a="$IR_ON" -v b="$IR_OFF" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }')"
  echo "bench-metrics: proxy instructions per request (callgrind, 1 worker, 1 client, -P $PIPELINE) on" \
    "$IR_ON, off $IR_OFF, ratio on/off $IR_RATIO"
fi
