#!/usr/bin/env bash
# Chaos benchmark: a 60-second verifying load through shardproxy while a random shard is killed
# and restarted every 10 seconds. Prints requests, errors by kind, mismatches (must be 0), proxy
# exits (must be 0) and the longest window with no successful reply for a live shard.
# Usage: tools/chaos.sh [--duration S] [--interval S] [--down S] [--clients N]
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [ ! -x "$root/build/proxy/shardproxy" ]; then
  "$root/tools/install-deps.sh"
  cmake -S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$root/build" --target shardproxy -j"$(nproc)"
fi
exec /usr/bin/python3 "$root/tools/chaos.py" --proxy-bin "$root/build/proxy/shardproxy" "$@"
