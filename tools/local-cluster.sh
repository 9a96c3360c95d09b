#!/usr/bin/env bash
# Creates and removes a real Redis Cluster on loopback from redis-server + redis-cli --cluster.
# State lives in a run directory ($SP_CLUSTER_DIR, default /tmp/shardproxy-cluster): one folder,
# pid and port file per node, so `stop` ends exactly what `start` began.
#
#   tools/local-cluster.sh start [MASTERS=3] [REPLICAS=1]   prints the seed address list
#   tools/local-cluster.sh stop
#   tools/local-cluster.sh status
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -euo pipefail

RUN_DIR="${SP_CLUSTER_DIR:-/tmp/shardproxy-cluster}"

die() { echo "local-cluster: $*" >&2; exit 1; }

free_port() {
  # Cluster nodes also listen on port+10000 (the cluster bus), so that one must be free too.
  /usr/bin/python3 - <<'PY'
import socket
while True:
    a = socket.socket(); a.bind(("127.0.0.1", 0)); port = a.getsockname()[1]
    if port + 10000 > 65535:
        a.close(); continue
    b = socket.socket()
    try:
        b.bind(("127.0.0.1", port + 10000))
    except OSError:
        a.close(); b.close(); continue
    a.close(); b.close(); print(port); break
PY
}

cmd_start() {
  local masters="${1:-3}" replicas="${2:-1}"
  [[ "$masters" =~ ^[0-9]+$ && "$masters" -ge 3 ]] || die "MASTERS must be a number >= 3, got '$masters'"
  [[ "$replicas" =~ ^[0-9]+$ ]] || die "REPLICAS must be a number, got '$replicas'"
  if [ -d "$RUN_DIR" ] && ls "$RUN_DIR"/*.pid >/dev/null 2>&1; then
    die "a cluster is already running in $RUN_DIR (tools/local-cluster.sh stop first)"
  fi
  mkdir -p "$RUN_DIR"
  local total=$((masters * (1 + replicas))) addrs=() i port
  for ((i = 0; i < total; i++)); do
    port="$(free_port)"
    mkdir -p "$RUN_DIR/node$i"
    redis-server --port "$port" --bind 127.0.0.1 --cluster-enabled yes \
      --cluster-config-file "$RUN_DIR/node$i/nodes.conf" --cluster-node-timeout 2000 \
      --save '' --appendonly no --dir "$RUN_DIR/node$i" --daemonize no \
      >"$RUN_DIR/node$i/redis.log" 2>&1 &
    echo $! >"$RUN_DIR/node$i.pid"
    echo "$port" >"$RUN_DIR/node$i.port"
    addrs+=("127.0.0.1:$port")
  done
  for ((i = 0; i < total; i++)); do
    port="$(cat "$RUN_DIR/node$i.port")"
    local deadline=$((SECONDS + 10))
    until redis-cli -p "$port" PING 2>/dev/null | grep -q PONG; do
      [ $SECONDS -lt $deadline ] || die "node$i (port $port) did not start; see $RUN_DIR/node$i/redis.log"
      sleep 0.1
    done
  done
  redis-cli --cluster create "${addrs[@]}" --cluster-replicas "$replicas" --cluster-yes \
    >"$RUN_DIR/create.log" 2>&1 || die "redis-cli --cluster create failed; see $RUN_DIR/create.log"
  local deadline=$((SECONDS + 30))
  for ((i = 0; i < total; i++)); do
    port="$(cat "$RUN_DIR/node$i.port")"
    until redis-cli -p "$port" CLUSTER INFO 2>/dev/null | grep -q "cluster_state:ok"; do
      [ $SECONDS -lt $deadline ] || die "cluster did not reach cluster_state:ok"
      sleep 0.2
    done
  done
  local seeds
  seeds="$(IFS=,; echo "${addrs[*]}")"
  echo "$seeds" >"$RUN_DIR/seeds"
  echo "local-cluster: $masters masters, $replicas replica(s) each, ready"
  echo "  seeds: $seeds"
  echo "  proxy: build/proxy/shardproxy --cluster ${addrs[0]}"
  echo "  stop:  tools/local-cluster.sh stop"
}

cmd_stop() {
  [ -d "$RUN_DIR" ] || { echo "local-cluster: nothing running"; return 0; }
  local f pid
  for f in "$RUN_DIR"/node*.pid; do
    [ -e "$f" ] || continue
    pid="$(cat "$f")"
    if [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q redis-server; then
      kill -TERM "$pid" 2>/dev/null || true
    fi
  done
  for f in "$RUN_DIR"/node*.pid; do
    [ -e "$f" ] || continue
    pid="$(cat "$f")"
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  done
  rm -rf "$RUN_DIR"
  echo "local-cluster: stopped"
}

cmd_status() {
  [ -f "$RUN_DIR/seeds" ] || { echo "local-cluster: nothing running"; return 1; }
  local port
  port="$(cat "$RUN_DIR/node0.port")"
  redis-cli -p "$port" CLUSTER NODES
}

case "${1:-}" in
  start) shift; cmd_start "$@" ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  *) echo "usage: tools/local-cluster.sh start [MASTERS] [REPLICAS] | stop | status" >&2; exit 2 ;;
esac
