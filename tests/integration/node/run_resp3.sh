#!/usr/bin/env bash
# Real clients speaking RESP3 (HELLO 3) through shardproxy: node-redis 6 and ioredis 6 from npm
# (clients_resp3.js) and `redis-cli -3`. Starts 3 redis-server shards behind $SHARDPROXY_BIN and
# one more redis-server as the reference (harness.sh); every check runs against both and the
# proxy's answers must equal redis-server's. Every process started here is stopped by its PID on
# any exit. run.sh is the RESP2 counterpart.
#
# Exit codes: 0 all checks passed; 1 a check failed or something would not start; 77 (ctest
# SKIP_RETURN_CODE) only when npm cannot reach its registry to install the clients.
set -euo pipefail

TEST_NAME=node-clients-resp3
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"

REDIS_CLI="${SP_REDIS_CLI:-/usr/bin/redis-cli}"
[ -x "$REDIS_CLI" ] || die "redis-cli not found: $REDIS_CLI"

install_clients
say "ioredis $(package_version ioredis6), redis (node-redis) $(package_version redis6)," \
    "$("$REDIS_CLI" --version)"
start_shards_and_proxy
start_redis reference
reference_port="$PORT"
say "reference redis-server on $reference_port"

# ---- redis-cli -3 ----
# redis-cli prints each RESP3 type its own way (a map as `1# "f" => "v"`, a double as
# `(double) 1.5`, a null as `(nil)`), so the same commands must print the same text through the
# proxy as against redis-server. --no-raw keeps that formatting although stdout is not a terminal.
cli() {  # cli PORT ARGS...: one redis-cli -3 connection, commands from stdin when no ARGS
  local port="$1"
  shift
  timeout 10 "$REDIS_CLI" -3 -h 127.0.0.1 -p "$port" --no-raw "$@" 2>&1
}

check_redis_cli() {
  local failed=0 commands="$WORK/cli-commands.txt"
  cat >"$commands" <<'EOF'
HSET cli:h f1 x f2 y f3 ""
HGETALL cli:h
HGETALL cli:h-missing
ZADD cli:z 1.5 a -0.25 b +inf c
ZSCORE cli:z a
ZSCORE cli:z b
ZSCORE cli:z c
ZSCORE cli:z missing
ZRANGE cli:z 0 -1 WITHSCORES
MSET cli:k0 v0 cli:k2 v2 cli:k4 v4 cli:k6 v6 cli:k8 v8
MGET cli:k0 cli:k1 cli:k2 cli:k3 cli:k4 cli:k5 cli:k6 cli:k7 cli:k8 cli:k9
EOF
  cli "$reference_port" <"$commands" >"$WORK/cli-reference.txt" || true
  cli "$proxy_port" <"$commands" >"$WORK/cli-proxy.txt" || true
  # The reference's own output shows redis-cli really spoke RESP3 (under RESP2 a map is a flat
  # list and a double a bulk string).
  if ! grep -qxF '1# "f1" => "x"' "$WORK/cli-reference.txt" ||
     ! grep -qxF '(double) 1.5' "$WORK/cli-reference.txt"; then
    echo "FAIL redis-cli -3: no RESP3 output even from redis-server:"
    sed 's/^/  /' "$WORK/cli-reference.txt"
    failed=1
  elif diff -u --label redis-server --label shardproxy "$WORK/cli-reference.txt" \
       "$WORK/cli-proxy.txt" >"$WORK/cli-diff.txt"; then
    echo "ok   redis-cli -3: HGETALL, ZSCORE, ZRANGE WITHSCORES, MGET print as from redis-server"
  else
    echo "FAIL redis-cli -3: HGETALL, ZSCORE, ZRANGE WITHSCORES, MGET print differently:"
    sed 's/^/  /' "$WORK/cli-diff.txt"
    failed=1
  fi
  # Connection ids and versions differ; the protocol must not.
  cli "$proxy_port" HELLO 3 >"$WORK/cli-hello.txt" || true
  if grep -qE '^[0-9]+# "proto" => \(integer\) 3$' "$WORK/cli-hello.txt"; then
    echo "ok   redis-cli -3: HELLO 3 reports proto 3"
  else
    echo "FAIL redis-cli -3: HELLO 3 does not report proto 3:"
    sed 's/^/  /' "$WORK/cli-hello.txt"
    failed=1
  fi
  return "$failed"
}

# ---- the clients ----
cd "$HERE"
rc=0
timeout 120 node clients_resp3.js "$proxy_port" "$reference_port" "${shard_ports[@]}" || rc=1
check_redis_cli || rc=1
exit "$rc"
