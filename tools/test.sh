#!/usr/bin/env bash
# The whole test suite, as CI runs it (.ci/run calls only this):
#   1. install missing Debian packages (tools/install-deps.sh)
#   2. formatting check (tools/check-format.sh) and the layer check (tools/check-layers.py:
#      includes between proxy/src folders point down the architecture's order)
#   3. Release build with -Werror in build/, then every ctest test: unit, integration, fuzz replay,
#      and the differential test against redis-server (fixed seeds)
#   4. ASAN+UBSAN build in build-asan/, then the unit, integration, differential tests and fuzz
#      corpus replays (the session fuzzer's included) again
#   5. TSAN build in build-tsan/, then the same tests again; a
#      ThreadSanitizer report from any process (test binaries, shardproxy, shardbench) fails it
#   6. with clang: libFuzzer targets in build-fuzz/, each run for $FUZZ_SECONDS (30) over a copy
#      of its corpus; a crash fails the run
# Every step runs even when an earlier one failed (except that a failed build skips its tests);
# the exit status is non-zero when any step failed, and the last line is a one-line summary.
#
# Environment: JOBS (build parallelism, default nproc), CTEST_JOBS (default 2), FUZZ_SECONDS,
# SKIP_ASAN=1, SKIP_TSAN=1, SKIP_FUZZ=1.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
JOBS="${JOBS:-$(nproc)}"
CTEST_JOBS="${CTEST_JOBS:-2}"
FUZZ_SECONDS="${FUZZ_SECONDS:-30}"
START=$SECONDS
RESULTS=()
FAILED=0
TSAN_DIGEST=""

step() {  # name command...: runs the command, records "name ok|FAILED (Ns)"
  local name="$1" t0=$SECONDS rc
  shift
  echo
  echo "==== test.sh: $name"
  "$@"
  rc=$?
  if [ $rc -eq 0 ]; then
    RESULTS+=("$name ok ($((SECONDS - t0))s)")
  else
    RESULTS+=("$name FAILED ($((SECONDS - t0))s)")
    FAILED=1
  fi
  return $rc
}

configure_build() {  # dir cmake-args...
  local dir="$1"
  shift
  cmake -S "$ROOT" -B "$dir" "$@" && cmake --build "$dir" -j"$JOBS"
}

run_ctest() {  # dir ctest-args...
  local dir="$1"
  shift
  rm -f "$dir/Testing/Temporary/LastTestsFailed.log"
  (cd "$dir" && ctest --output-on-failure -j"$CTEST_JOBS" --timeout 600 "$@")
}

run_tsan_ctest() {
  # Reports go to files (every process the tests start inherits TSAN_OPTIONS), so a race in a
  # proxy that exits normally is not lost in a log the test never reads.
  local reports="$ROOT/build-tsan/tsan-reports" rc
  rm -rf "$reports"
  mkdir -p "$reports"
  TSAN_OPTIONS="halt_on_error=0 second_deadlock_stack=1 log_path=$reports/report suppressions=$ROOT/tests/tsan.supp" \
    run_ctest "$ROOT/build-tsan" -L 'unit|integration|differential|fuzz'
  rc=$?
  if compgen -G "$reports/report.*" >/dev/null; then
    echo "test.sh: ThreadSanitizer reports:"
    cat "$reports"/report.*
    rc=1
    TSAN_DIGEST="$(for f in "$reports"/report.*; do head -n 24 "$f"; done | head -n 60)"
  fi
  return $rc
}

run_fuzzers() {
  local dir="$ROOT/build-fuzz" fuzzers=() f name corpus work rc=0
  mapfile -t fuzzers < <(cmake --build "$dir" --target help | awk '/_fuzzer$/ {print $2}' | sort -u)
  if [ ${#fuzzers[@]} -eq 0 ]; then
    echo "test.sh: no *_fuzzer targets"
    return 0
  fi
  cmake --build "$dir" -j"$JOBS" --target "${fuzzers[@]}" || return 1
  for f in "${fuzzers[@]}"; do
    name="${f%_fuzzer}"
    local bin
    bin="$(find "$dir" -type f -name "$f" -perm -u+x | head -n 1)"
    [ -n "$bin" ] || { echo "test.sh: $f not built"; rc=1; continue; }
    work="$(mktemp -d /tmp/sp-fuzz-"$name".XXXXXX)"
    mkdir -p "$work/corpus" "$work/artifacts"
    corpus="$ROOT/tests/fuzz/corpus/$name"
    [ -d "$corpus" ] && cp -r "$corpus"/. "$work/corpus/"
    local dict=()
    [ -f "$ROOT/tests/fuzz/$name.dict" ] && dict=(-dict="$ROOT/tests/fuzz/$name.dict")
    echo "test.sh: $f for ${FUZZ_SECONDS}s over $(find "$work/corpus" -type f | wc -l) seed(s)"
    if ! timeout $((FUZZ_SECONDS + 120)) "$bin" -max_total_time="$FUZZ_SECONDS" -timeout=10 \
        -rss_limit_mb=2048 -print_final_stats=1 "${dict[@]}" \
        -artifact_prefix="$work/artifacts/" "$work/corpus" >"$work/log" 2>&1; then
      echo "test.sh: $f FAILED; last lines of its log ($work/log):"
      tail -n 40 "$work/log"
      mkdir -p "$ROOT/tests/fuzz/crashes"
      cp "$work"/artifacts/* "$ROOT/tests/fuzz/crashes/" 2>/dev/null &&
        echo "test.sh: crash inputs copied to tests/fuzz/crashes/"
      rc=1
    else
      grep -E "stat::number_of_executed_units|Done [0-9]+ runs" "$work/log" | tail -n 1
      rm -rf "$work"
    fi
  done
  return $rc
}

step install-deps tools/install-deps.sh
step format tools/check-format.sh
step layers /usr/bin/python3 "$ROOT/tools/check-layers.py"

if step build configure_build "$ROOT/build" -DCMAKE_BUILD_TYPE=Release -DSHARDPROXY_WERROR=ON; then
  step ctest run_ctest "$ROOT/build"
fi

SANITIZER_FLAGS=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DSHARDPROXY_WERROR=ON)

if [ "${SKIP_ASAN:-0}" != 1 ]; then
  # Leak checking needs ptrace-like powers some containers lack; UBSAN findings are fatal.
  export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
  export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=0:detect_stack_use_after_return=0}"
  if step asan-build configure_build "$ROOT/build-asan" "${SANITIZER_FLAGS[@]}" \
      -DSHARDPROXY_SANITIZE=address,undefined; then
    step asan-ctest run_ctest "$ROOT/build-asan" -L 'unit|integration|differential|fuzz'
  fi
fi

if [ "${SKIP_TSAN:-0}" != 1 ]; then
  if step tsan-build configure_build "$ROOT/build-tsan" "${SANITIZER_FLAGS[@]}" \
      -DSHARDPROXY_SANITIZE=thread; then
    step tsan-ctest run_tsan_ctest
  fi
fi

if [ "${SKIP_FUZZ:-0}" != 1 ] && command -v clang++ >/dev/null; then
  if step fuzz-configure env CC=clang CXX=clang++ cmake -S "$ROOT" -B "$ROOT/build-fuzz" \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSHARDPROXY_FUZZ=ON; then
    step fuzz run_fuzzers
  fi
elif [ "${SKIP_FUZZ:-0}" != 1 ]; then
  RESULTS+=("fuzz skipped (no clang)")
fi

# What failed, again at the end, where a reader of the last lines of a long log finds it.
print_failures() {
  local build failed
  for build in build build-asan build-tsan; do
    failed="$ROOT/$build/Testing/Temporary/LastTestsFailed.log"
    [ -s "$failed" ] && sed "s/^/test.sh: failed in $build: /" "$failed" | head -n 20
  done
  if [ -n "$TSAN_DIGEST" ]; then
    echo "test.sh: the first ThreadSanitizer reports (all of them are above):"
    echo "$TSAN_DIGEST"
  fi
}

echo
if [ $FAILED -ne 0 ]; then
  print_failures
fi
if [ $FAILED -eq 0 ]; then
  echo "test.sh: PASS in $((SECONDS - START))s: ${RESULTS[*]}" | sed 's/) /), /g'
else
  echo "test.sh: FAIL in $((SECONDS - START))s: ${RESULTS[*]}" | sed 's/) /), /g'
fi
exit $FAILED
