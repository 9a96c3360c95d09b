# shellcheck shell=bash
# Shared by run.sh and run_resp3.sh (sourced, not run): installs the npm clients pinned in
# package.json / package-lock.json into this folder, and starts redis-server shards, a reference
# redis-server and $SHARDPROXY_BIN on free loopback ports. Every process started here is stopped by
# its PID on any exit.
#
# The sourcing script sets TEST_NAME (the prefix of its messages) before sourcing.
#
# Exit codes: 1 something would not start; 77 (ctest SKIP_RETURN_CODE) only when npm cannot reach
# its registry to install the clients.

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
PROXY_BIN="${SHARDPROXY_BIN:-$ROOT/build/proxy/shardproxy}"
SHARDS="${SP_NODE_SHARDS:-3}"
REDIS_SERVER="${SP_REDIS_SERVER:-/usr/bin/redis-server}"

say() { echo "$TEST_NAME: $*"; }
die() { echo "$TEST_NAME: $*" >&2; exit 1; }

command -v node >/dev/null 2>&1 || die "node not found (tools/install-deps.sh installs nodejs)"
command -v npm >/dev/null 2>&1 || die "npm not found (tools/install-deps.sh installs npm)"
[ -x "$PROXY_BIN" ] || die "shardproxy binary not found: $PROXY_BIN (set SHARDPROXY_BIN)"
[ -x "$REDIS_SERVER" ] || die "redis-server not found: $REDIS_SERVER"

WORK="$(mktemp -d "/tmp/sp-$TEST_NAME.XXXXXX")"
PIDS=()
cleanup() {
  local rc=$? pid deadline
  # Newest first: the proxy before the shards it talks to.
  for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do
    kill -TERM "${PIDS[i]}" 2>/dev/null || true
  done
  deadline=$((SECONDS + 10))
  for pid in "${PIDS[@]}"; do
    while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then
      kill -KILL "$pid" 2>/dev/null || true
    fi
    wait "$pid" 2>/dev/null || true
  done
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ]; then
    for log in "$WORK"/*.log; do
      [ -e "$log" ] || continue
      echo "---- $(basename "$log") (last 30 lines)"
      tail -n 30 "$log"
    done
  fi
  rm -rf "$WORK"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---- install the clients ----
# npm ci installs exactly the tree in package-lock.json; --prefer-offline takes what npm's cache
# already holds, so a rerun needs no network. npm ci starts by deleting node_modules, and run.sh
# and run_resp3.sh may run at once (ctest -j): whichever comes first installs while holding a lock
# on this folder and leaves a stamp of the lockfile it installed; the other waits for the lock,
# finds the stamp current and leaves the tree alone.
install_clients() {
  cd "$HERE"
  local args=(--prefer-offline --no-audit --no-fund --loglevel=error)
  local stamp=node_modules/.shardproxy-installed lock want
  want="$(cat package.json package-lock.json 2>/dev/null | sha256sum)"
  exec {lock}<"$HERE"
  flock -w 300 "$lock" || die "waited 300 s for another test's npm install in $HERE"
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    npm_install "${args[@]}"
    echo "$want" >"$stamp"
  fi
  exec {lock}<&-
}

npm_install() {
  if [ -f package-lock.json ]; then
    npm ci "$@" >"$WORK/npm.log" 2>&1 && return 0
  else
    npm install "$@" >"$WORK/npm.log" 2>&1 && return 0
  fi
  if ! timeout 60 npm ping >>"$WORK/npm.log" 2>&1; then
    say "SKIP: npm cannot reach its registry ($(npm config get registry)):"
    tail -n 5 "$WORK/npm.log" | sed 's/^/  /'
    exit 77
  fi
  cat "$WORK/npm.log" >&2
  die "npm install failed although the registry answers"
}

# package_version NAME: the installed version of the npm package NAME (an alias works too).
package_version() {
  node -p "require('$1/package.json').version" 2>/dev/null
}

# ---- start servers on free loopback ports ----
free_port() {
  node -e 'const s = require("net").createServer(); s.listen(0, "127.0.0.1", () => {
    console.log(s.address().port); s.close(); });'
}

# True once `port` answers PING; false if `pid` died or `secs` passed.
wait_ready() {
  local port="$1" pid="$2" deadline=$((SECONDS + $3))
  while [ $SECONDS -lt $deadline ]; do
    kill -0 "$pid" 2>/dev/null || return 1
    if node -e '
      const c = require("net").connect(+process.argv[1], "127.0.0.1");
      let got = "";
      c.on("connect", () => c.write("PING\r\n"));
      c.on("data", (d) => { got += d; if (got.includes("\r\n")) { c.destroy(); process.exit(got.startsWith("+PONG") ? 0 : 1); } });
      c.on("error", () => process.exit(1));
      setTimeout(() => process.exit(1), 500);' "$port" 2>/dev/null; then
      return 0
    fi
    sleep 0.1
  done
  return 1
}

# start NAME COMMAND...: with the port in $PORT (chosen here, retried if another process took it).
start() {
  local name="$1" attempt pid
  shift
  for attempt in 1 2 3 4 5; do
    PORT="$(free_port)"
    "${@//@PORT@/$PORT}" >"$WORK/$name.log" 2>&1 &
    pid=$!
    PIDS+=("$pid")
    if wait_ready "$PORT" "$pid" 20; then
      return 0
    fi
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    unset 'PIDS[${#PIDS[@]}-1]'  # reaped: its PID may be reused, never signal it again
    say "$name did not start on port $PORT (attempt $attempt)"
  done
  die "$name would not start"
}

# start_redis NAME: a redis-server without persistence; its port in $PORT.
start_redis() {
  mkdir -p "$WORK/$1"
  start "$1" "$REDIS_SERVER" --port @PORT@ --bind 127.0.0.1 --save "" --appendonly no \
    --dir "$WORK/$1" --daemonize no
}

# start_shards_and_proxy: $SHARDS redis-servers (ports in shard_ports) behind the proxy (port in
# proxy_port).
start_shards_and_proxy() {
  local s shard_list=""
  shard_ports=()
  for ((s = 0; s < SHARDS; s++)); do
    start_redis "shard$s"
    shard_ports+=("$PORT")
    shard_list="${shard_list:+$shard_list,}127.0.0.1:$PORT"
  done
  start proxy "$PROXY_BIN" --port @PORT@ --workers 2 --shards "$shard_list" --metrics-listen off
  proxy_port="$PORT"
  say "$SHARDS shards on ${shard_ports[*]}, shardproxy on $proxy_port"
}
