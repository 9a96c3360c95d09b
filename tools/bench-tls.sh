#!/usr/bin/env bash
# What TLS costs per request in shardproxy, beside the plain path, in one run on this machine.
# Makes a throwaway test CA, a server certificate (SAN DNS:localhost, IP:127.0.0.1, ECDSA P-256)
# and a client certificate with the openssl CLI, starts 2 redis-server shards that each listen on
# a plain port and a TLS port (--save '' --appendonly no, --tls-auth-clients no), and four
# proxies (--workers 1 --metrics-listen off), one per setup:
#   plain      clients plain, shards plain
#   client     clients TLS (--tls-listen), shards plain
#   backend    clients plain, shards TLS (--backend-tls against the shards' TLS ports)
#   both       clients TLS, shards TLS
# Each proxy is driven by shardbench at pipeline 1 and at pipeline 16 (50 connections, SET:GET
# 1:1, -d 256 -r 100000, a fixed request count bounded by --time-limit), with the 100,000 keys
# loaded beforehand so every GET hits. Per run it records QPS and the proxy's CPU time (utime +
# stime of /proc/PID/stat, all threads, before and after the run) divided by the requests, as µs
# per request, plus the 2 shards' CPU per request. The setups run in turn, ROUNDS times, the order
# rotated every round, so machine drift hits all of them alike. Prints a Markdown table: the
# median (min–max) of each cell over the rounds, and each TLS setup's ratio to plain in the same
# round (median and range of the per-round ratios). A run that hit its time limit, saw errors,
# or whose proxy logged a TLS or shard failure is flagged.
#
# Usage: tools/bench-tls.sh [options]     (the defaults take about 2-4 minutes on 2 shared cores)
#   --rounds N           rounds over the four setups (default 3)
#   --requests N1,N16    requests per run at pipeline 1 and at pipeline 16 (default
#                        200000,800000)
#   --time-limit S       end a run after S seconds even if short of its requests (default 30)
#   --bin PATH           shardproxy binary (default build-dev/proxy/shardproxy)
#   --bench PATH         shardbench binary (default build-dev/bench/shardbench)
#   --keep               keep the work directory (certificates, logs, JSON reports)
#   -h, --help           print this text and exit
#
# Everything it starts is stopped by PID on exit.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="$ROOT/build-dev/proxy/shardproxy"
BENCH="$ROOT/build-dev/bench/shardbench"
ROUNDS=3
REQUESTS="200000,800000"
TIME_LIMIT=30
KEEP=0

die() { echo "bench-tls: $*" >&2; exit 1; }

while [ $# -gt 0 ]; do
  case "$1" in
    -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;;
    --keep) KEEP=1; shift ;;
    --rounds | --requests | --time-limit | --bin | --bench)
      [ $# -ge 2 ] || die "$1 needs a value"
      case "$1" in
        --rounds) ROUNDS="$2" ;;
        --requests) REQUESTS="$2" ;;
        --time-limit) TIME_LIMIT="$2" ;;
        --bin) BIN="$2" ;;
        --bench) BENCH="$2" ;;
      esac
      shift 2
      ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
done

is_count() { [[ "$1" =~ ^[0-9]+$ ]] && [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]; }
is_count "$ROUNDS" 1 100 || die "--rounds: 1..100"
is_count "$TIME_LIMIT" 1 3600 || die "--time-limit: 1..3600 seconds"
[[ "$REQUESTS" =~ ^[0-9]+,[0-9]+$ ]] || die "--requests takes N1,N16"
N1="${REQUESTS%,*}"
N16="${REQUESTS#*,}"
{ is_count "$N1" 1000 100000000 && is_count "$N16" 1000 100000000; } || die "--requests: 1000 and up"
[ -x "$BIN" ] || die "no shardproxy at $BIN (--bin)"
[ -x "$BENCH" ] || die "no shardbench at $BENCH (--bench)"
for tool in redis-server redis-cli openssl; do
  command -v "$tool" >/dev/null || die "$tool missing (tools/install-deps.sh)"
done

TMP="$(mktemp -d /tmp/shardproxy-bench-tls.XXXXXX)"
PIDS=()
stop_pid() {  # pid [seconds]: SIGTERM, wait up to seconds, then SIGKILL
  local pid="$1" deadline=$((SECONDS + ${2:-30}))
  kill -TERM "$pid" 2>/dev/null || return 0
  while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}
cleanup() {
  local rc=$? i
  trap - EXIT INT TERM
  # Newest first: the proxies before the shards, so they log no shard failures on the way out.
  for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do
    stop_pid "${PIDS[$i]}" 10
  done
  if [ "$KEEP" = 1 ]; then
    echo "bench-tls: kept $TMP" >&2
  else
    rm -rf "$TMP"
  fi
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

free_port() {
  /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

wait_ping() {  # port pid seconds [redis-cli TLS flags...]: true once PING answers PONG
  local port="$1" pid="$2" deadline=$((SECONDS + $3))
  shift 3
  while [ $SECONDS -lt $deadline ]; do
    kill -0 "$pid" 2>/dev/null || return 1
    if timeout 5 redis-cli -h 127.0.0.1 -p "$port" "$@" PING 2>/dev/null | grep -q PONG; then
      return 0
    fi
    sleep 0.1
  done
  return 1
}

# ---- certificates: a test CA, the server's (shards and proxy) and a client's ----
CERTS="$TMP/certs"
mkdir -p "$CERTS"
(
  cd "$CERTS"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key \
    -out ca.crt -days 2 -subj "/CN=shardproxy bench-tls test CA"
  printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >server.ext
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout server.key \
    -out server.csr -subj "/CN=localhost"
  openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out server.crt \
    -days 2 -extfile server.ext
  printf 'extendedKeyUsage=clientAuth\n' >client.ext
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout client.key \
    -out client.csr -subj "/CN=bench-tls client"
  openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out client.crt \
    -days 2 -extfile client.ext
) >"$TMP/openssl.log" 2>&1 || { cat "$TMP/openssl.log" >&2; die "openssl failed"; }
CA="$CERTS/ca.crt"
CLI_TLS=(--tls --cacert "$CA")

# ---- shards: each with a plain port and a TLS port ----
SHARD_PORTS=()
SHARD_TLS_PORTS=()
SHARD_PIDS=()
for i in 0 1; do
  ok=0
  for _ in 1 2 3 4 5; do
    port="$(free_port)"
    tport="$(free_port)"
    [ "$port" != "$tport" ] || continue
    mkdir -p "$TMP/shard$i"
    redis-server --port "$port" --tls-port "$tport" --bind 127.0.0.1 \
      --tls-cert-file "$CERTS/server.crt" --tls-key-file "$CERTS/server.key" \
      --tls-ca-cert-file "$CA" --tls-auth-clients no \
      --save '' --appendonly no --dir "$TMP/shard$i" --daemonize no \
      >"$TMP/shard$i.log" 2>&1 </dev/null &
    pid=$!
    PIDS+=("$pid")
    if wait_ping "$port" "$pid" 10 && wait_ping "$tport" "$pid" 5 "${CLI_TLS[@]}"; then
      ok=1
      break
    fi
    stop_pid "$pid" 5
  done
  [ "$ok" = 1 ] || { cat "$TMP/shard$i.log" >&2; die "redis-server with TLS did not start"; }
  SHARD_PORTS+=("$port")
  SHARD_TLS_PORTS+=("$tport")
  SHARD_PIDS+=("$pid")
done
PLAIN_SHARDS="127.0.0.1:${SHARD_PORTS[0]},127.0.0.1:${SHARD_PORTS[1]}"
TLS_SHARDS="127.0.0.1:${SHARD_TLS_PORTS[0]},127.0.0.1:${SHARD_TLS_PORTS[1]}"

# ---- proxies: one per setup, all running side by side ----
SETUPS=(plain client backend both)
declare -A LABEL=(
  [plain]="plain"
  [client]="client TLS"
  [backend]="backend TLS"
  [both]="client + backend TLS"
)
declare -A PPID_OF PORT_OF TLS_OF  # setup -> proxy pid, port the bench uses, "1" when it is TLS
for setup in "${SETUPS[@]}"; do
  ok=0
  for _ in 1 2 3 4 5; do
    port="$(free_port)"
    tport="$(free_port)"
    [ "$port" != "$tport" ] || continue
    args=(--listen "127.0.0.1:$port" --workers 1 --metrics-listen off --log-level warn
      --log-file "$TMP/proxy-$setup.log")
    case "$setup" in
      client | both)
        args+=(--tls-listen "127.0.0.1:$tport" --tls-cert-file "$CERTS/server.crt"
          --tls-key-file "$CERTS/server.key") ;;
    esac
    case "$setup" in
      backend | both)
        args+=(--shards "$TLS_SHARDS" --backend-tls --backend-tls-ca-cert-file "$CA"
          --backend-tls-cert-file "$CERTS/client.crt" --backend-tls-key-file "$CERTS/client.key") ;;
      *) args+=(--shards "$PLAIN_SHARDS") ;;
    esac
    echo "$BIN ${args[*]}" >"$TMP/proxy-$setup.cmd"
    "$BIN" "${args[@]}" >"$TMP/proxy-$setup.out" 2>&1 </dev/null &
    pid=$!
    PIDS+=("$pid")
    if wait_ping "$port" "$pid" 10; then
      case "$setup" in
        client | both) wait_ping "$tport" "$pid" 5 "${CLI_TLS[@]}" && ok=1 ;;
        *) ok=1 ;;
      esac
    fi
    [ "$ok" = 1 ] && break
    stop_pid "$pid" 5
  done
  [ "$ok" = 1 ] || { cat "$TMP/proxy-$setup.out" "$TMP/proxy-$setup.log" >&2 2>/dev/null || true
    die "proxy ($setup) did not start"; }
  PPID_OF[$setup]="$pid"
  case "$setup" in
    client | both) PORT_OF[$setup]="$tport"; TLS_OF[$setup]=1 ;;
    *) PORT_OF[$setup]="$port"; TLS_OF[$setup]="" ;;
  esac
done

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
  awk -v t="$1" -v r="$2" -v hz="$TCK" 'BEGIN { if (r > 0) printf "%.2f", t * 1e6 / hz / r; else print "0" }'
}

# shardbench's JSON report -> "requests qps flags" (flags: "-" or e.g. "interrupted,errors")
summarise() {
  /usr/bin/python3 - "$1" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
ph = d["phases"][-1]
rows = [r for r in ph["rows"] if r["type"] != "Totals"]
ops = sum(r["ops"] for r in rows)
errs = sum(sum(r["errors"].values()) for r in rows if r.get("errors"))
flags = []
if ph.get("interrupted"):
    flags.append("interrupted")
if errs:
    flags.append("errors=%d" % errs)
qps = ops / ph["duration_s"] if ph["duration_s"] > 0 else 0
print(ops, "%.0f" % qps, ",".join(flags) or "-")
EOF
}

bench() {  # setup pipeline requests json [extra shardbench flags...]
  local setup="$1" pipe="$2" n="$3" json="$4"
  shift 4
  local tls=()
  [ -n "${TLS_OF[$setup]}" ] && tls=("${CLI_TLS[@]}")
  timeout --foreground $((TIME_LIMIT + 60)) "$BENCH" -h 127.0.0.1 -p "${PORT_OF[$setup]}" "${tls[@]}" \
    -c 50 -P "$pipe" -n "$n" -d 256 -r 100000 --time-limit "$TIME_LIMIT" --no-progress \
    --json-out-file "$json" "$@" >"$json.out" 2>&1
}

# Load all 100,000 keys once (through the plain proxy), so every GET hits; then warm each proxy
# (shard connections, TLS sessions to the shards, buffers) with a short unmeasured run.
bench plain 16 100000 "$TMP/prefill.json" --ratio 1:0 --key-pattern S:S ||
  { cat "$TMP/prefill.json.out" >&2; die "prefill failed"; }
for setup in "${SETUPS[@]}"; do
  bench "$setup" 1 5000 "$TMP/warm-$setup.json" --ratio 1:1 ||
    { cat "$TMP/warm-$setup.json.out" >&2; die "warm-up of the $setup proxy failed"; }
done
CIPHER="$(/usr/bin/python3 -c 'import json, sys; t = json.load(open(sys.argv[1]))["tls"]; print(t["protocol"], t["cipher"])' "$TMP/warm-client.json" 2>/dev/null || echo "?")"

declare -A SAMPLES  # "setup/pipe/field" -> space-separated values, one per round
add() { SAMPLES["$1"]="${SAMPLES["$1"]:-} $2"; }
median() {  # values... -> their median
  printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END {
    if (NR == 0) { print "?"; exit }
    if (NR % 2) print a[(NR + 1) / 2]; else printf "%.2f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
range() {  # values... -> "min–max"
  local s
  s="$(printf '%s\n' "$@" | sort -g)"
  echo "$(echo "$s" | head -n 1)–$(echo "$s" | tail -n 1)"
}
FLAGGED=()
run() {  # setup pipeline round
  local setup="$1" pipe="$2" round="$3" n p0 p1 s0 s1 json out
  n="$N1"
  [ "$pipe" = 16 ] && n="$N16"
  json="$TMP/run-$setup-P$pipe-r$round.json"
  p0="$(ticks "${PPID_OF[$setup]}")"
  s0="$(ticks "${SHARD_PIDS[@]}")"
  bench "$setup" "$pipe" "$n" "$json" --ratio 1:1 || true
  p1="$(ticks "${PPID_OF[$setup]}")"
  s1="$(ticks "${SHARD_PIDS[@]}")"
  if ! out="$(summarise "$json" 2>/dev/null)"; then
    FLAGGED+=("$setup -P $pipe round $round: shardbench failed: $(tail -n 2 "$json.out" | tr '\n' ' ')")
    return 0
  fi
  # shellcheck disable=SC2086
  set -- $out
  [ "$3" != "-" ] && FLAGGED+=("$setup -P $pipe round $round: $3 ($1 of $n requests)")
  add "$setup/$pipe/qps" "$2"
  add "$setup/$pipe/cpu" "$(us_per_req $((p1 - p0)) "$1")"
  add "$setup/$pipe/shards" "$(us_per_req $((s1 - s0)) "$1")"
  add "$setup/$pipe/req" "$1"
}

echo "bench-tls: 4 setups x pipeline 1 ($N1 requests) and 16 ($N16), $ROUNDS rounds;" \
  "2 shards, proxies with 1 worker; $(nproc) cores; TLS: $CIPHER" >&2
for ((round = 1; round <= ROUNDS; round++)); do
  for pipe in 1 16; do
    for ((k = 0; k < 4; k++)); do
      run "${SETUPS[$(((k + round - 1) % 4))]}" "$pipe" "$round"
    done
  done
  echo "bench-tls: round $round/$ROUNDS done ($SECONDS s)" >&2
done

ratios() {  # setup pipe -> per-round ratios setup/plain of proxy CPU per request
  local setup="$1" pipe="$2" i
  # shellcheck disable=SC2206  # the samples are space-separated numbers
  local a=(${SAMPLES["$setup/$pipe/cpu"]:-}) b=(${SAMPLES["plain/$pipe/cpu"]:-})
  for ((i = 0; i < ${#a[@]} && i < ${#b[@]}; i++)); do
    awk -v a="${a[$i]}" -v b="${b[$i]}" 'BEGIN { if (b > 0) printf "%.2f\n", a / b; else print "0" }'
  done
}
cell() {  # key -> "median (min–max)", or "—"
  local v="${SAMPLES["$1"]:-}"
  [ -n "$v" ] || { echo "—"; return; }
  # shellcheck disable=SC2086
  echo "$(median $v) ($(range $v))"
}

echo
echo "| setup | -P | proxy CPU µs/req | × plain (same round) | QPS | shards CPU µs/req |"
echo "|---|--:|--:|--:|--:|--:|"
for pipe in 1 16; do
  for setup in "${SETUPS[@]}"; do
    ratio="1"
    if [ "$setup" != plain ]; then
      mapfile -t r < <(ratios "$setup" "$pipe")
      ratio="—"
      [ ${#r[@]} -gt 0 ] && ratio="**$(median "${r[@]}")** ($(range "${r[@]}"))"
    fi
    qps="—"
    # shellcheck disable=SC2086
    [ -n "${SAMPLES["$setup/$pipe/qps"]:-}" ] && qps="$(median ${SAMPLES["$setup/$pipe/qps"]})"
    echo "| ${LABEL[$setup]} | $pipe | $(cell "$setup/$pipe/cpu") | $ratio | $qps | $(cell "$setup/$pipe/shards") |"
  done
done
echo
for setup in "${SETUPS[@]}"; do
  if grep -qiE "tls|timeout after|ejected|down:|error" "$TMP/proxy-$setup.log" 2>/dev/null; then
    FLAGGED+=("$setup proxy log: $(grep -iE "tls|timeout after|ejected|down:|error" \
      "$TMP/proxy-$setup.log" | head -n 2 | tr '\n' ' ')")
  fi
done
if [ ${#FLAGGED[@]} -gt 0 ]; then
  echo "WARNING: these runs are suspect:"
  printf -- '- %s\n' "${FLAGGED[@]}"
  echo
fi
echo "TLS: $CIPHER, ECDSA P-256 certificates; 50 handshakes per client-TLS run (in the figures)."
echo "Command: tools/bench-tls.sh --rounds $ROUNDS --requests $N1,$N16 --time-limit $TIME_LIMIT" \
  "($(date -u +%Y-%m-%d), $(nproc) cores; client, proxies and shards share them, unpinned; $SECONDS s)"
