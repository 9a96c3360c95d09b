#!/usr/bin/env bash
# Count-based profile of shardproxy's cost per request, steady on a shared, noisy machine: it
# counts instructions (valgrind callgrind) and system calls (strace -c -f) instead of timing.
# Each count is a MARGINAL over two request counts N1 < N2, each served by a separate proxy
# process: (count at N2 - count at N1) / (requests at N2 - requests at N1), so start-up, the
# benchmark's connection set-up and shutdown cancel out. It starts its own redis-server shards
# (--save '' --appendonly no) and proxies on free loopback ports, and stops them all by PID.
#
# Usage: tools/profile.sh [options]
#   --bin PATH           shardproxy binary (default build-dev/proxy/shardproxy; copy it
#                        elsewhere first if a rebuild may replace it during the run)
#   --shards N           redis-server shards started by the script (default 4)
#   --workers N          proxy worker threads (default 1)
#   --pipeline P         redis-benchmark -P (default 1)
#   --clients C          redis-benchmark -c (default 50)
#   --requests N1,N2     redis-benchmark -n of the short and the long run (default 20000,60000
#                        for P < 8, 100000,300000 for P >= 8); -t set,get runs N of EACH test,
#                        so requests = N x number of tests
#   --datasize D         redis-benchmark -d (default 256)
#   --tests LIST         redis-benchmark -t (default set,get)
#   --config-extra FILE  YAML appended to the generated proxy config (e.g. a placement section)
#   --resp3              the clients speak RESP3 (redis-benchmark -3: HELLO 3 on each connection)
#   --mode cg|st|both    callgrind, strace or both (default both)
#   --repeat R           measure each marginal R times; the median is reported (default 1)
#   -h, --help           print this text and exit
#
# Prints the load, instructions/request (user space, callgrind), syscalls/request with the top
# syscalls (strace -c -f), the top 15 functions by inclusive instructions per request
# (callgrind_annotate --inclusive=yes on the N2 run, divided by that run's requests), and the
# exact commands and proxy config used. Shards are flushed before every run. Env:
# PROFILE_RUN_TIMEOUT (seconds one benchmark run may take, default 1800), PROFILE_KEEP=1 (keep
# the work directory with the callgrind and strace outputs).
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="$ROOT/build-dev/proxy/shardproxy"
SHARDS=4
WORKERS=1
PIPELINE=1
CLIENTS=50
REQUESTS=""
DATASIZE=256
TESTS="set,get"
CONFIG_EXTRA=""
PROTOCOL=()  # redis-benchmark's protocol flag: -3 for RESP3
MODE=both
REPEAT=1
RUN_TIMEOUT="${PROFILE_RUN_TIMEOUT:-1800}"

die() { echo "profile: $*" >&2; exit 1; }

while [ $# -gt 0 ]; do
  case "$1" in
    -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;;
    --resp3) PROTOCOL=(-3); shift ;;
    --bin | --shards | --workers | --pipeline | --clients | --requests | --datasize | --tests | \
      --config-extra | --mode | --repeat)
      [ $# -ge 2 ] || die "$1 needs a value"
      case "$1" in
        --bin) BIN="$2" ;;
        --shards) SHARDS="$2" ;;
        --workers) WORKERS="$2" ;;
        --pipeline) PIPELINE="$2" ;;
        --clients) CLIENTS="$2" ;;
        --requests) REQUESTS="$2" ;;
        --datasize) DATASIZE="$2" ;;
        --tests) TESTS="$2" ;;
        --config-extra) CONFIG_EXTRA="$2" ;;
        --mode) MODE="$2" ;;
        --repeat) REPEAT="$2" ;;
      esac
      shift 2
      ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
done

is_count() { [[ "$1" =~ ^[0-9]+$ ]] && [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]; }
is_count "$SHARDS" 1 64 || die "--shards: 1..64"
is_count "$WORKERS" 1 64 || die "--workers: 1..64"
is_count "$PIPELINE" 1 10000 || die "--pipeline: 1..10000"
is_count "$CLIENTS" 1 10000 || die "--clients: 1..10000"
is_count "$DATASIZE" 1 100000000 || die "--datasize: a positive byte count"
is_count "$REPEAT" 1 100 || die "--repeat: 1..100"
is_count "$RUN_TIMEOUT" 1 86400 || die "PROFILE_RUN_TIMEOUT: seconds"
case "$MODE" in cg | st | both) ;; *) die "--mode: cg, st or both" ;; esac
[[ "$TESTS" =~ ^[a-z_]+(,[a-z_]+)*$ ]] || die "--tests: a comma-separated list (set,get)"
if [ -z "$REQUESTS" ]; then
  if [ "$PIPELINE" -ge 8 ]; then REQUESTS=100000,300000; else REQUESTS=20000,60000; fi
fi
[[ "$REQUESTS" =~ ^[0-9]+,[0-9]+$ ]] || die "--requests: N1,N2"
N1="${REQUESTS%,*}"
N2="${REQUESTS#*,}"
if [ "$N1" -lt 1 ] || [ "$N2" -le "$N1" ]; then die "--requests: 1 <= N1 < N2"; fi
[ -x "$BIN" ] || die "no executable shardproxy at $BIN (--bin)"
BIN="$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")"
if [ -n "$CONFIG_EXTRA" ]; then
  [ -r "$CONFIG_EXTRA" ] || die "--config-extra: cannot read $CONFIG_EXTRA"
fi
need=(redis-server redis-cli redis-benchmark timeout)
[ "$MODE" != st ] && need+=(valgrind callgrind_annotate)
[ "$MODE" != cg ] && need+=(strace)
for tool in "${need[@]}"; do
  command -v "$tool" >/dev/null || die "$tool is not installed"
done
NTESTS="$(awk -F, '{ print NF }' <<<"$TESTS")"
R1=$((N1 * NTESTS))
R2=$((N2 * NTESTS))

TMP="$(mktemp -d /tmp/sp-profile.XXXXXX)"
PIDS=()      # redis-server shards
PROC_PIDS=() # the proxy (or its tracer) of the run in progress

stop_pid() {  # pid [seconds]: SIGTERM, wait up to seconds, then SIGKILL
  local pid="$1" deadline=$((SECONDS + ${2:-30}))
  kill -TERM "$pid" 2>/dev/null || return 0
  while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

cleanup() {
  local pid
  for pid in "${PROC_PIDS[@]}" "${PIDS[@]}"; do
    stop_pid "$pid" 10
  done
  if [ "${PROFILE_KEEP:-0}" = 1 ]; then
    echo "profile: kept $TMP" >&2
  else
    rm -rf "$TMP"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
  /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

wait_ping() {  # port pid seconds: true once PING answers PONG; false if pid died or time ran out
  local port="$1" pid="$2" deadline=$((SECONDS + $3))
  while [ $SECONDS -lt $deadline ]; do
    kill -0 "$pid" 2>/dev/null || return 1
    if timeout 5 redis-cli -h 127.0.0.1 -p "$port" PING 2>/dev/null | grep -q PONG; then
      return 0
    fi
    sleep 0.1
  done
  return 1
}

# ---- shards ----
SHARD_PORTS=()
REDIS_CMD="redis-server --port PORT --bind 127.0.0.1 --save '' --appendonly no --daemonize no"
for ((i = 0; i < SHARDS; i++)); do
  ok=0
  for _attempt in 1 2 3 4 5; do
    port="$(free_port)"
    mkdir -p "$TMP/shard$i"
    redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$TMP/shard$i" \
      --daemonize no >"$TMP/shard$i.log" 2>&1 </dev/null &
    pid=$!
    PIDS+=("$pid")
    if wait_ping "$port" "$pid" 10; then
      ok=1
      break
    fi
    stop_pid "$pid" 5
  done
  [ "$ok" = 1 ] || { cat "$TMP/shard$i.log" >&2; die "redis-server did not start"; }
  SHARD_PORTS+=("$port")
done

flush_shards() {
  local p
  for p in "${SHARD_PORTS[@]}"; do
    timeout 10 redis-cli -h 127.0.0.1 -p "$p" FLUSHALL >/dev/null || die "FLUSHALL on shard $p failed"
  done
}

# ---- proxy config: no slots on the shards (default placement splits them evenly; twemproxy and
# codis placements take none) ----
write_config() {  # port -> $TMP/proxy.yaml
  {
    echo "listen: {host: 127.0.0.1, port: $1}"
    echo "workers: $WORKERS"
    echo "log_level: warn"
    echo "metrics: {listen: \"\"}"
    echo "slowlog: {threshold_us: 60000000}"
    # Under callgrind the proxy runs tens of times slower, and a shard connect can outlast the
    # default 1 s timeout when the machine is busy: the shard would be ejected mid-run.
    if [ "$MODE" != st ] && ! grep -q '^backend:' "${CONFIG_EXTRA:-/dev/null}"; then
      echo "backend: {connect_timeout_ms: 20000}"
    fi
    echo "pidfile: $TMP/proxy.pid"
    echo "shards:"
    local i
    for ((i = 0; i < SHARDS; i++)); do
      echo "  - {name: shard$i, address: \"127.0.0.1:${SHARD_PORTS[$i]}\"}"
    done
    if [ -n "$CONFIG_EXTRA" ]; then
      cat "$CONFIG_EXTRA"
    fi
  } >"$TMP/proxy.yaml"
}

bench() {  # port n
  timeout "$RUN_TIMEOUT" redis-benchmark -h 127.0.0.1 -p "$1" -t "$TESTS" -n "$2" -c "$CLIENTS" \
    -d "$DATASIZE" -r 100000 -P "$PIPELINE" "${PROTOCOL[@]}" -q >"$TMP/bench.log" 2>&1 ||
    { cat "$TMP/bench.log" >&2; die "redis-benchmark failed or ran past ${RUN_TIMEOUT}s"; }
  # -q prints one "NAME: x requests per second" line per test; anything else is an error.
  if [ "$(grep -c 'requests per second' "$TMP/bench.log")" -ne "$NTESTS" ] ||
    grep -qi 'err' "$TMP/bench.log"; then
    cat "$TMP/bench.log" >&2
    die "redis-benchmark reported errors"
  fi
}

# One measured run: starts the proxy under the tool, runs the load, stops the proxy with SIGTERM
# and waits for it (and the tool) to finish writing. kind cg|st, n, output file.
run_one() {
  local kind="$1" n="$2" out="$3" port tracer proxy_pid i
  port="$(free_port)"
  write_config "$port"
  rm -f "$TMP/proxy.pid"
  flush_shards
  if [ "$kind" = cg ]; then
    valgrind --tool=callgrind --callgrind-out-file="$out" "$BIN" --config "$TMP/proxy.yaml" \
      >"$TMP/proxy.log" 2>&1 </dev/null &
  else
    strace -c -f -o "$out" "$BIN" --config "$TMP/proxy.yaml" >"$TMP/proxy.log" 2>&1 </dev/null &
  fi
  tracer=$!
  PROC_PIDS=("$tracer")
  wait_ping "$port" "$tracer" 180 || { cat "$TMP/proxy.log" >&2; die "proxy ($kind) did not answer PING"; }
  # valgrind runs the program in its own process; strace forks it, so signal the proxy's PID
  # (from its pidfile), not strace's.
  proxy_pid="$tracer"
  if [ "$kind" = st ]; then
    for i in $(seq 1 100); do
      [ -s "$TMP/proxy.pid" ] && break
      sleep 0.05
    done
    proxy_pid="$(cat "$TMP/proxy.pid" 2>/dev/null || true)"
    if ! [[ "$proxy_pid" =~ ^[0-9]+$ ]] ||
      [ "$(awk '{ sub(/^.*\) /, ""); print $2 }' "/proc/$proxy_pid/stat" 2>/dev/null)" != "$tracer" ]; then
      die "cannot find the traced proxy's PID (pidfile: '$proxy_pid')"
    fi
  fi
  bench "$port" "$n"
  kill -TERM "$proxy_pid"
  # The tool exits after the proxy; wait for it, bounded (callgrind writes its output at exit).
  local deadline=$((SECONDS + 120))
  while kill -0 "$tracer" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.1; done
  kill -0 "$tracer" 2>/dev/null && { stop_pid "$tracer" 5; die "proxy ($kind) did not exit within 120 s of SIGTERM"; }
  wait "$tracer" || true
  PROC_PIDS=()
  [ -s "$out" ] || { cat "$TMP/proxy.log" >&2; die "no output in $out"; }
}

cg_total() { awk '/^(totals|summary):/ { print $2; exit }' "$1"; }

# strace -c table -> "syscall calls" lines (the total as "total N").
st_counts() {
  awk '$1 ~ /^[0-9.]+$/ && NF >= 5 { print $NF, $4 }' "$1"
}

median() {
  sort -g | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

per_request() {  # a b -> (b - a) / (R2 - R1)
  awk -v a="$1" -v b="$2" -v d="$((R2 - R1))" 'BEGIN { printf "%.6f\n", (b - a) / d }'
}

fmt_int() {  # 2736.6 -> 2,737
  awk -v x="$1" 'BEGIN { s = sprintf("%.0f", x); sign = ""; if (s ~ /^-/) { sign = "-"; s = substr(s, 2) }
    out = ""; while (length(s) > 3) { out = "," substr(s, length(s) - 2) out; s = substr(s, 1, length(s) - 3) }
    print sign s out }'
}

fmt_dec() {  # 3 significant-ish decimals: 2.28, 0.150
  awk -v x="$1" 'BEGIN { if (x < 0.995 && x > -0.995) printf "%.3f", x; else printf "%.2f", x }'
}

# ---- measure ----
plural() { [ "$1" = 1 ] && echo "$1 $2" || echo "$1 $2s"; }
LOAD="load: $(plural "$SHARDS" shard), $(plural "$WORKERS" worker), -P $PIPELINE, -c $CLIENTS,"
LOAD+=" -d $DATASIZE, $TESTS; N $N1 -> $N2 (requests $R1 -> $R2)"
[ -n "$CONFIG_EXTRA" ] && LOAD+=", config-extra $(basename "$CONFIG_EXTRA")"
[ ${#PROTOCOL[@]} -gt 0 ] && LOAD+=", RESP3 clients (redis-benchmark -3)"
echo "profile: $LOAD" >&2
T0=$SECONDS
IR=()
SC=()
for ((r = 1; r <= REPEAT; r++)); do
  if [ "$MODE" != st ]; then
    for n in "$N1" "$N2"; do
      echo "profile: callgrind run $r, -n $n ..." >&2
      run_one cg "$n" "$TMP/callgrind.$r.$n.out"
    done
    a="$(cg_total "$TMP/callgrind.$r.$N1.out")"
    b="$(cg_total "$TMP/callgrind.$r.$N2.out")"
    if [ -z "$a" ] || [ -z "$b" ]; then die "no totals in the callgrind outputs"; fi
    IR+=("$(per_request "$a" "$b")")
  fi
  if [ "$MODE" != cg ]; then
    for n in "$N1" "$N2"; do
      echo "profile: strace run $r, -n $n ..." >&2
      run_one st "$n" "$TMP/strace.$r.$n.txt"
    done
    st_counts "$TMP/strace.$r.$N1.txt" >"$TMP/st.$r.a"
    st_counts "$TMP/strace.$r.$N2.txt" >"$TMP/st.$r.b"
    a="$(awk '$1 == "total" { print $2 }' "$TMP/st.$r.a")"
    b="$(awk '$1 == "total" { print $2 }' "$TMP/st.$r.b")"
    if [ -z "$a" ] || [ -z "$b" ]; then die "no totals in the strace outputs"; fi
    SC+=("$(per_request "$a" "$b")")
  fi
done
echo "profile: measured in $((SECONDS - T0)) s" >&2

# ---- report ----
echo "$LOAD"
if [ "$MODE" != st ]; then
  med="$(printf '%s\n' "${IR[@]}" | median)"
  reps=""
  for x in "${IR[@]}"; do reps+="${reps:+ }$(fmt_int "$x")"; done
  printf '%-21s %-7s (repeats: %s)\n' "instructions/request" "$(fmt_int "$med")" "$reps"
fi
if [ "$MODE" != cg ]; then
  med="$(printf '%s\n' "${SC[@]}" | median)"
  reps=""
  for x in "${SC[@]}"; do reps+="${reps:+ }$(fmt_dec "$x")"; done
  # Per syscall, the marginal of the repeat whose total is the median (the first one for R=1).
  pick=1
  for ((r = 1; r <= REPEAT; r++)); do
    if [ "${SC[$((r - 1))]}" = "$med" ]; then pick=$r; break; fi
  done
  top="$(awk -v d="$((R2 - R1))" 'NR == FNR { a[$1] = $2; next }
           $1 != "total" { m = ($2 - a[$1]) / d; if (m >= 0.0005 || m <= -0.0005) printf "%s %.6f\n", $1, m }' \
           "$TMP/st.$pick.a" "$TMP/st.$pick.b" | sort -k2,2gr | head -n 8 |
         while read -r name m; do printf '%s %s  ' "$name" "$(fmt_dec "$m")"; done)"
  printf '%-21s %-7s %s(repeats: %s)\n' "syscalls/request" "$(fmt_dec "$med")" "$top" "$reps"
fi
if [ "$MODE" != st ]; then
  echo "top functions (inclusive instructions/request, callgrind_annotate --inclusive=yes on the N2 run, / $R2):"
  callgrind_annotate --inclusive=yes "$TMP/callgrind.1.$N2.out" 2>/dev/null |
    awk -v r="$R2" '
      /file:function/ { body = 1; next }
      body && /^ *[0-9,]+ / {
        ir = $1; gsub(/,/, "", ir)
        line = $0; sub(/^ *[0-9,]+ +(\([ 0-9.]+%\) +)?/, "", line)
        # Keep the object ([.../libuv.so.1] -> [libuv.so.1]) only where the function has no name.
        if (line ~ /^\?\?\?:0x/) { gsub(/\[[^]]*\//, "[", line) } else { sub(/ \[[^]]*\]$/, "", line) }
        if (length(line) > 110) line = substr(line, 1, 107) "..."
        # Reads to the end rather than exit: an early exit would SIGPIPE callgrind_annotate.
        if (++n <= 15) printf "  %9.0f  %s\n", ir / r, line
      }'
fi
echo "commands:"
echo "  shards:  $SHARDS x $REDIS_CMD"
echo "  config:  $(tr '\n' ' ' <"$TMP/proxy.yaml" | sed "s|$TMP|\$TMP|g; s/ \+/ /g")"
[ "$MODE" != st ] && echo "  cg:      valgrind --tool=callgrind --callgrind-out-file=OUT $BIN --config proxy.yaml"
[ "$MODE" != cg ] && echo "  st:      strace -c -f -o OUT $BIN --config proxy.yaml  (SIGTERM to the proxy's PID)"
echo "  load:    redis-benchmark -p PORT -t $TESTS -n {$N1,$N2} -c $CLIENTS -d $DATASIZE -r 100000 -P $PIPELINE${PROTOCOL[*]:+ ${PROTOCOL[*]}} -q  (shards flushed before each run)"
[ "$MODE" != st ] && echo "  top:     callgrind_annotate --inclusive=yes OUT(N2)"
echo "  this:    tools/profile.sh --shards $SHARDS --workers $WORKERS --pipeline $PIPELINE --clients $CLIENTS --requests $N1,$N2 --datasize $DATASIZE --tests $TESTS --mode $MODE --repeat $REPEAT${CONFIG_EXTRA:+ --config-extra $CONFIG_EXTRA}${PROTOCOL[*]:+ --resp3}"
echo "  time:    $((SECONDS - T0)) s measuring"
