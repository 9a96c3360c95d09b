#!/usr/bin/env bash
# Runs the seed reproductions (shardbench matrix and every conf/scenarios/*.yaml) and regenerates
# docs/benchmarks.md, its charts (docs/benchmarks/) and the README's benchmark section (between
# <!-- bench:begin --> and <!-- bench:end -->) from the result directories. Nothing in docs/ or
# the README's block is edited by hand: rerun this.
#
#   tools/bench-report.sh [--scale quick|full] [--only NAME,...] [--publish-only] [--results DIR]
#                         [--repeat N] [--proxy-cpus LIST] [--shard-cpus LIST] [--client-cpus LIST]
#
#   --scale S        quick (default; a few minutes in all: a smoke test, not a measurement, so
#                    it is run but not published) or full (the seed's sizes where this machine
#                    allows, 3 repetitions of each point; run it one NAME at a time with --only,
#                    each under ~10 min per repetition)
#   --repeat N       repetitions of every cell and point (default: 3 at full, 1 at quick)
#   --proxy-cpus, --shard-cpus, --client-cpus LIST
#                    pin the proxy, the shards and the client threads (e.g. 0, 1-3, 0,2)
#   --only LIST      run only these: matrix and/or scenario names (file names without .yaml)
#   --publish-only   run nothing; rebuild the docs from the results already in DIR
#   --results DIR    result root (default bench-out/SCALE); each run replaces DIR/NAME
#
# Uses build/bench/shardbench and build/proxy/shardproxy (SP_BUILD_DIR to override), building
# them (Release) when missing. Every server a run starts is stopped by PID (also on Ctrl-C).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
SCALE=quick
ONLY=""
PUBLISH_ONLY=0
RESULTS=""
PASS=()  # flags passed to every shardbench matrix and scenario run
while [ $# -gt 0 ]; do
  case "$1" in
    --scale) SCALE="$2"; shift ;;
    --scale=*) SCALE="${1#*=}" ;;
    --only) ONLY="$2"; shift ;;
    --only=*) ONLY="${1#*=}" ;;
    --publish-only) PUBLISH_ONLY=1 ;;
    --results) RESULTS="$2"; shift ;;
    --results=*) RESULTS="${1#*=}" ;;
    --repeat|--proxy-cpus|--shard-cpus|--client-cpus)
      [ $# -ge 2 ] || { echo "bench-report: missing value for $1" >&2; exit 2; }
      PASS+=("$1" "$2"); shift ;;
    --repeat=*|--proxy-cpus=*|--shard-cpus=*|--client-cpus=*) PASS+=("$1") ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "bench-report: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
case "$SCALE" in quick|full) ;; *) echo "bench-report: --scale quick or full" >&2; exit 2 ;; esac
RESULTS="${RESULTS:-bench-out/$SCALE}"

BUILD_DIR="${SP_BUILD_DIR:-build}"  # relative to the repository root, as the reports show it
BENCH="$BUILD_DIR/bench/shardbench"
PROXY="$BUILD_DIR/proxy/shardproxy"

names=(matrix)
for f in conf/scenarios/*.yaml; do
  names+=("$(basename "$f" .yaml)")
done
selected=("${names[@]}")
if [ -n "$ONLY" ]; then
  IFS=',' read -r -a selected <<<"$ONLY"
  for n in "${selected[@]}"; do
    if [ "$n" != matrix ] && [ ! -f "conf/scenarios/$n.yaml" ]; then
      echo "bench-report: no scenario '$n' (known: ${names[*]})" >&2
      exit 2
    fi
  done
fi

if [ "$PUBLISH_ONLY" -eq 0 ]; then
  if [ ! -x "$BENCH" ] || [ ! -x "$PROXY" ]; then
    cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build "$BUILD_DIR" --target shardbench shardproxy -j"$(nproc)" | tail -n 1
  fi
  mkdir -p "$RESULTS"
  status=0
  for n in "${selected[@]}"; do
    out="$RESULTS/$n"
    rm -rf "$out"
    start=$(date +%s)
    echo "bench-report: $n ($SCALE) -> $out" >&2
    rc=0
    if [ "$n" = matrix ]; then
      "$BENCH" matrix --scale "$SCALE" --proxy-bin "$PROXY" --out "$out" ${PASS[@]+"${PASS[@]}"} \
        >/dev/null || rc=$?
    else
      "$BENCH" scenario "conf/scenarios/$n.yaml" --scale "$SCALE" --proxy-bin "$PROXY" \
        --out "$out" ${PASS[@]+"${PASS[@]}"} >/dev/null || rc=$?
    fi
    echo "bench-report: $n done in $(( $(date +%s) - start )) s (exit $rc)" >&2
    if [ "$rc" -eq 130 ]; then
      exit 130
    fi
    [ "$rc" -eq 0 ] || status=$rc
  done
fi

if [ "$PUBLISH_ONLY" -eq 0 ] && [ "$SCALE" = quick ]; then
  echo "bench-report: quick results are a smoke test, not a measurement: left in $RESULTS," \
    "not published (publish with --scale full)" >&2
  exit "${status:-0}"
fi
/usr/bin/python3 tools/bench-report-publish.py --results "$RESULTS" --scale "$SCALE" \
  --docs docs/benchmarks.md --charts docs/benchmarks --readme README.md
exit "${status:-0}"
