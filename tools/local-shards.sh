#!/usr/bin/env bash
# Starts and stops local redis-server shards (and optionally shardproxy in front of them) on free
# loopback ports. State lives in a run directory ($SP_RUN_DIR, default /tmp/shardproxy-local):
# one pid and port file per process plus their logs, so `stop` ends exactly what `start` began.
#
#   tools/local-shards.sh start N [--proxy] [--workers W] [--log-level L]
#   tools/local-shards.sh stop
#   tools/local-shards.sh status
#
# SHARDPROXY_BIN overrides the proxy binary (default build/proxy/shardproxy).
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RUN_DIR="${SP_RUN_DIR:-/tmp/shardproxy-local}"
PROXY_BIN="${SHARDPROXY_BIN:-$ROOT/build/proxy/shardproxy}"

die() { echo "local-shards: $*" >&2; exit 1; }

free_port() {
  /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# True when the pid in $1 is alive and its command line contains $2.
pid_is() {
  local pid="$1" name="$2"
  [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- "$name"
}

wait_port() {  # port pid seconds
  local port="$1" pid="$2" deadline=$((SECONDS + $3))
  while [ $SECONDS -lt $deadline ]; do
    kill -0 "$pid" 2>/dev/null || return 1
    if redis-cli -h 127.0.0.1 -p "$port" PING 2>/dev/null | grep -q PONG; then
      return 0
    fi
    sleep 0.1
  done
  return 1
}

running_pids() {
  local f
  for f in "$RUN_DIR"/*.pid; do
    [ -e "$f" ] || continue
    echo "$(basename "$f" .pid) $(cat "$f")"
  done
}

cmd_stop() {
  [ -d "$RUN_DIR" ] || { echo "local-shards: nothing running ($RUN_DIR absent)"; return 0; }
  local name pid pids=()
  # The proxy first, so it does not see its shards vanish.
  for name in proxy $(running_pids | awk '$1 != "proxy" {print $1}'); do
    [ -e "$RUN_DIR/$name.pid" ] || continue
    pid="$(cat "$RUN_DIR/$name.pid")"
    local what=redis-server
    # Its argv[0]: a shardproxy, or the copy SHARDPROXY_BIN names (e.g. /tmp/sp-new).
    [ "$name" = proxy ] && what="shardproxy\\|$PROXY_BIN"
    if pid_is "$pid" "$what"; then
      kill -TERM "$pid" 2>/dev/null || true
      pids+=("$pid")
    fi
    rm -f "$RUN_DIR/$name.pid" "$RUN_DIR/$name.port"
    if [ "$name" = proxy ]; then
      # Let the proxy drain before its shards go.
      local deadline=$((SECONDS + 10))
      while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.1; done
    fi
  done
  local deadline=$((SECONDS + 10))
  for pid in "${pids[@]}"; do
    while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then
      kill -KILL "$pid" 2>/dev/null || true
    fi
  done
  echo "local-shards: stopped ${#pids[@]} process(es) from $RUN_DIR"
}

cmd_status() {
  [ -d "$RUN_DIR" ] || { echo "local-shards: nothing running"; return 0; }
  local name pid
  while read -r name pid; do
    local state=dead
    kill -0 "$pid" 2>/dev/null && state=running
    echo "$name pid=$pid port=$(cat "$RUN_DIR/$name.port" 2>/dev/null || echo ?) $state"
  done < <(running_pids)
}

cmd_start() {
  local count="${1:-}"
  shift || true
  [[ "$count" =~ ^[0-9]+$ ]] && [ "$count" -ge 1 ] && [ "$count" -le 64 ] || die "start N: N in 1..64"
  local proxy=0 workers=1 level=warn
  while [ $# -gt 0 ]; do
    case "$1" in
      --proxy) proxy=1 ;;
      --workers) workers="$2"; shift ;;
      --log-level) level="$2"; shift ;;
      *) die "unknown option $1" ;;
    esac
    shift
  done
  command -v redis-server >/dev/null || die "redis-server not installed (run tools/install-deps.sh)"
  mkdir -p "$RUN_DIR"
  if [ -n "$(running_pids)" ]; then
    die "already running in $RUN_DIR (tools/local-shards.sh stop first)"
  fi
  local i port pid shards=""
  for ((i = 0; i < count; i++)); do
    local ok=0 attempt
    for attempt in 1 2 3 4 5; do
      port="$(free_port)"
      mkdir -p "$RUN_DIR/shard$i"
      setsid /usr/bin/redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
        --dir "$RUN_DIR/shard$i" --daemonize no >"$RUN_DIR/shard$i.log" 2>&1 </dev/null &
      pid=$!
      if wait_port "$port" "$pid" 10; then
        ok=1
        break
      fi
      kill -KILL "$pid" 2>/dev/null || true
    done
    [ $ok = 1 ] || { cmd_stop; die "shard $i did not start; see $RUN_DIR/shard$i.log"; }
    echo "$pid" >"$RUN_DIR/shard$i.pid"
    echo "$port" >"$RUN_DIR/shard$i.port"
    shards="${shards:+$shards,}127.0.0.1:$port"
  done
  echo "$shards" >"$RUN_DIR/shards"
  echo "local-shards: $count shard(s) at $shards"
  if [ $proxy = 1 ]; then
    [ -x "$PROXY_BIN" ] || { cmd_stop; die "no proxy binary at $PROXY_BIN (build it first)"; }
    port="$(free_port)"
    setsid "$PROXY_BIN" --listen 127.0.0.1 --port "$port" --workers "$workers" \
      --shards "$shards" --log-level "$level" >"$RUN_DIR/proxy.log" 2>&1 </dev/null &
    pid=$!
    if ! wait_port "$port" "$pid" 15; then
      cat "$RUN_DIR/proxy.log" >&2 || true
      cmd_stop
      die "shardproxy did not start"
    fi
    echo "$pid" >"$RUN_DIR/proxy.pid"
    echo "$port" >"$RUN_DIR/proxy.port"
    echo "local-shards: shardproxy (workers=$workers) at 127.0.0.1:$port, pid $pid"
  fi
}

case "${1:-}" in
  start) shift; cmd_start "$@" ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  *) echo "usage: $0 start N [--proxy] [--workers W] [--log-level L] | stop | status" >&2; exit 2 ;;
esac
