#!/usr/bin/env bash
# Starts twemproxy (Debian's nutcracker) in front of running shards for a side-by-side run, with
# the settings shardbench's --with-twemproxy uses: redis protocol, crc16 over the {hash tag},
# modula distribution, one connection per shard, no ejection.
#
#   tools/twemproxy.sh start H:P,H:P,... [PORT]   prints "twemproxy=127.0.0.1:PORT" (for --target)
#   tools/twemproxy.sh stop                       stops the one started here (by its PID)
#
# State lives in ${SP_TWEMPROXY_DIR:-/tmp/shardproxy-twemproxy}.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -euo pipefail
DIR="${SP_TWEMPROXY_DIR:-/tmp/shardproxy-twemproxy}"
free_port() {
  /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
case "${1:-}" in
  start)
    [ $# -ge 2 ] || { sed -n '6,7p' "$0" >&2; exit 2; }
    command -v nutcracker >/dev/null || { echo "twemproxy: nutcracker missing (tools/install-deps.sh)" >&2; exit 1; }
    mkdir -p "$DIR"
    if [ -f "$DIR/pid" ] && kill -0 "$(cat "$DIR/pid")" 2>/dev/null; then
      echo "twemproxy: already running (pid $(cat "$DIR/pid")); tools/twemproxy.sh stop first" >&2
      exit 1
    fi
    port="${3:-$(free_port)}"
    {
      echo "shardbench:"
      echo "  listen: 127.0.0.1:$port"
      echo "  hash: crc16"
      echo "  hash_tag: \"{}\""
      echo "  distribution: modula"
      echo "  redis: true"
      echo "  server_connections: 1"
      echo "  auto_eject_hosts: false"
      echo "  preconnect: true"
      echo "  timeout: 10000"
      echo "  servers:"
      i=0
      IFS=',' read -r -a shards <<<"$2"
      for s in "${shards[@]}"; do
        echo "   - $s:1 shard$i"
        i=$((i + 1))
      done
    } >"$DIR/nutcracker.yml"
    nutcracker -t -c "$DIR/nutcracker.yml" >/dev/null 2>&1 ||
      { echo "twemproxy: nutcracker rejects $DIR/nutcracker.yml" >&2; exit 1; }
    nutcracker -c "$DIR/nutcracker.yml" -a 127.0.0.1 -s "$(free_port)" -o "$DIR/nutcracker.log" \
      </dev/null >/dev/null 2>&1 &
    echo $! >"$DIR/pid"
    for _ in $(seq 1 100); do
      redis-cli -h 127.0.0.1 -p "$port" GET twemproxy:probe >/dev/null 2>&1 && break
      sleep 0.1
    done
    echo "twemproxy=127.0.0.1:$port"
    ;;
  stop)
    if [ -f "$DIR/pid" ]; then
      pid="$(cat "$DIR/pid")"
      kill -TERM "$pid" 2>/dev/null || true
      rm -f "$DIR/pid"
    fi
    ;;
  *) sed -n '2,9p' "$0"; exit 2 ;;
esac
