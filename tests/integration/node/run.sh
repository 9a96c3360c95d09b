#!/usr/bin/env bash
# Real Node.js clients against shardproxy (issue 7): installs ioredis and node-redis from npm into
# this folder (versions pinned in package.json / package-lock.json), starts 3 redis-server shards
# and $SHARDPROXY_BIN on free loopback ports (harness.sh), and runs clients.js. Every process
# started here is stopped by its PID on any exit. run_resp3.sh is the RESP3 counterpart.
#
# Exit codes: 0 all checks passed; 1 a check failed or something would not start; 77 (ctest
# SKIP_RETURN_CODE) only when npm cannot reach its registry to install the clients.
set -euo pipefail

TEST_NAME=node-clients
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"

install_clients
say "ioredis $(package_version ioredis), redis (node-redis) $(package_version redis)"
start_shards_and_proxy

# ---- the clients ----
cd "$HERE"
timeout 120 node clients.js "$proxy_port" "${shard_ports[@]}"
