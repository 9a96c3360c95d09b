#!/usr/bin/env bash
# Quick start: installs what is missing, builds shardproxy (Release) in build/, starts 4 local
# redis-server shards on free loopback ports with shardproxy in front of them, and runs a short
# shardbench load through the proxy and straight at a fifth, separate redis-server (so the
# proxied shards hold only their own slots' keys), printed side by side.
# Everything it started is stopped on exit (also on Ctrl-C) unless --keep is given.
#
#   tools/quickstart.sh [--keep] [--workers N] [-n REQUESTS]
#
# Workers: 1 by default. On a small machine the benchmark client, the 4 shards and the proxy all
# share the cores, and one worker is the fair comparison with a single redis-server; pass
# --workers 0 for one worker per core.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
KEEP=0
WORKERS=1
REQUESTS=100000
while [ $# -gt 0 ]; do
  case "$1" in
    --keep) KEEP=1 ;;
    --workers) WORKERS="$2"; shift ;;
    -n) REQUESTS="$2"; shift ;;
    -h|--help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "quickstart: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

BUILD_DIR="${SP_BUILD_DIR:-build}"  # SP_BUILD_DIR: another build directory
case "$BUILD_DIR" in /*) ;; *) BUILD_DIR="$ROOT/$BUILD_DIR" ;; esac
tools/install-deps.sh
echo "quickstart: building shardproxy and shardbench (Release) in $BUILD_DIR/; a few minutes"
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release >/dev/null
# Progress every 10%, and every warning or error as it comes.
cmake --build "$BUILD_DIR" --target shardproxy shardbench -j"$(nproc)" 2>&1 | awk '
  /^\[ *[0-9]+%\]/ { p = substr($0, 2, index($0, "%") - 2) + 0
                     if (p >= next_at) { printf "quickstart: build %3d%%\n", p; fflush(); next_at = p - p % 10 + 10 }
                     next }
  { print; fflush() }'
[ "${PIPESTATUS[0]}" -eq 0 ] || { echo "quickstart: the build failed" >&2; exit 1; }

# --keep runs in the well-known directory so `tools/local-shards.sh stop` finds it later;
# a plain run uses a private one and never touches anyone else's shards.
if [ $KEEP = 1 ]; then
  export SP_RUN_DIR="${SP_RUN_DIR:-/tmp/shardproxy-local}"
else
  export SP_RUN_DIR="$(mktemp -d /tmp/shardproxy-quickstart.XXXXXX)"
fi
export SHARDPROXY_BIN="$BUILD_DIR/proxy/shardproxy"

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  stop_direct 2>/dev/null || true
  if [ $KEEP = 0 ]; then
    tools/local-shards.sh stop >/dev/null || true
    rm -rf "$SP_RUN_DIR"
  fi
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

tools/local-shards.sh start 4 --proxy --workers "$WORKERS"
PROXY_PORT="$(cat "$SP_RUN_DIR/proxy.port")"

# The direct comparison runs against a redis-server of its own, stopped once measured.
DIRECT_PORT="$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
redis-server --port "$DIRECT_PORT" --bind 127.0.0.1 --save '' --appendonly no \
  --dir "$SP_RUN_DIR" >"$SP_RUN_DIR/direct.log" 2>&1 &
DIRECT_PID=$!
stop_direct() { [ -z "${DIRECT_PID:-}" ] || { kill "$DIRECT_PID" 2>/dev/null; wait "$DIRECT_PID" 2>/dev/null; DIRECT_PID=; }; }
for _ in $(seq 100); do
  redis-cli -p "$DIRECT_PORT" PING 2>/dev/null | grep -q PONG && break
  sleep 0.1
done

bench() {  # port -> "SET_QPS GET_QPS"
  local out
  out="$(timeout --foreground 300 "$BUILD_DIR/bench/shardbench" -h 127.0.0.1 -p "$1" -t set,get -d 256 \
    -r 100000 -c 50 -n "$REQUESTS" -q 2>/dev/null | tr '\r' '\n')"
  local set get
  set="$(echo "$out" | awk '/^SET: .*requests per second/ {print $2}' | tail -n 1)"
  get="$(echo "$out" | awk '/^GET: .*requests per second/ {print $2}' | tail -n 1)"
  echo "${set:-?} ${get:-?}"
}

echo "quickstart: shardbench -t set,get -d 256 -r 100000 -c 50 -n $REQUESTS -q"
read -r p_set p_get < <(bench "$PROXY_PORT")
read -r d_set d_get < <(bench "$DIRECT_PORT")
stop_direct
echo
printf '%-8s %28s %28s\n' "" "shardproxy (4 shards, ${WORKERS}w)" "one redis-server directly"
printf '%-8s %28s %28s\n' "SET" "$p_set req/s" "$d_set req/s"
printf '%-8s %28s %28s\n' "GET" "$p_get req/s" "$d_get req/s"
echo "(client, proxy and shards share this machine's $(nproc) cores; compare, don't quote)"
echo

if [ $KEEP = 1 ]; then
  echo "quickstart: left running (state in $SP_RUN_DIR):"
  tools/local-shards.sh status
  echo
  echo "  connect:  redis-cli -p $PROXY_PORT"
  echo "  stop:     tools/local-shards.sh stop"
  echo "            (or: kill $(cat "$SP_RUN_DIR"/*.pid | tr '\n' ' '))"
fi
