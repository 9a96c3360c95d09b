#!/usr/bin/env bash
# Installs every Debian package shardproxy needs to build, test and benchmark. Idempotent: only
# packages that are missing are installed, and apt-get update runs only when something is missing.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -euo pipefail

packages=(
  build-essential cmake pkg-config clang clang-format libclang-rt-14-dev
  libuv1-dev liburing-dev libhiredis-dev libyaml-cpp-dev libspdlog-dev libfmt-dev prometheus-cpp-dev
  libcivetweb-dev libsystemd-dev libssl-dev openssl
  libgtest-dev libgmock-dev googletest libbenchmark-dev
  redis-server redis-tools redis-sentinel nutcracker prometheus prometheus-redis-exporter
  librsvg2-bin logrotate man-db strace valgrind
  python3 python3-redis python3-pytest procps iproute2
  nodejs
)
# npm (tests/integration/node installs ioredis and node-redis with it): Debian's package, unless
# the installed nodejs already brings the command (NodeSource's does, and conflicts with it).
if ! command -v npm >/dev/null 2>&1; then
  packages+=(npm)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"

# The Debian redis-server, redis-sentinel and prometheus-redis-exporter packages start system
# instances (6379, 26379, 9121); tests never use them, and a
# fresh machine should not keep a stray server running because of us.
for service in redis-server redis-sentinel prometheus-redis-exporter; do
  if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet "$service" 2>/dev/null; then
    $SUDO systemctl stop "$service" || true
  fi
done
