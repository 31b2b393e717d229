#!/usr/bin/env bash
# Installs dependencies, builds Arbiter with warnings as errors, and runs every test with CTest
# (unit and scenario tests, the CLI tests, the end-to-end tests, and bounded libFuzzer runs).
#
#   scripts/test.sh                     the default tree (build/), as the README builds it
#   scripts/test.sh --tree sanitize     a Debug tree (build-sanitize/) with AddressSanitizer,
#                                       UndefinedBehaviorSanitizer and LeakSanitizer, every test
#   scripts/test.sh --tree both         both, one after the other (ARBITER_SANITIZE=1 means this)
#   scripts/test.sh -- -L unit          anything after `--` goes to ctest (here: the quick unit tests)
#
# Every step prints its wall time (scripts/timed.sh; docs/ci.md keeps the figures).
set -euo pipefail
cd "$(dirname "$0")/.."
tree=plain
[ "${ARBITER_SANITIZE:-0}" = "1" ] && tree=both
ctest_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --tree) tree="${2:?--tree needs plain, sanitize or both}"; shift 2 ;;
    --) shift; ctest_args=("$@"); break ;;
    *) echo "test.sh: unknown argument '$1' (want --tree plain|sanitize|both, or -- CTEST-ARGS)" >&2; exit 2 ;;
  esac
done
case "$tree" in plain|sanitize|both) ;; *) echo "test.sh: --tree must be plain, sanitize or both, not '$tree'" >&2; exit 2 ;; esac

source scripts/timed.sh

timed "install-deps" ./scripts/install-deps.sh

if [ "$tree" = plain ] || [ "$tree" = both ]; then
  # (ON is also the default with g++ 12, so this reuses what the README's first command built.)
  timed "configure (build)" cmake -S . -B build -DARBITER_WERROR=ON
  timed "build (build)" cmake --build build -j2
  timed "tests (build)" ctest --test-dir build --output-on-failure -j2 "${ctest_args[@]}"
fi
if [ "$tree" = sanitize ] || [ "$tree" = both ]; then
  echo "== the same tests under ASan, UBSan and LSan =="
  # Warnings are enforced in the main tree; optimisation levels change what g++ warns about.
  # Line tables (-g1) are what a sanitizer report needs, at a fraction of -g's compile time.
  # UBSan's alignment, null and object-size checks are left out: ASan already reports what they
  # would in this code (a null or out-of-bounds access, an access past an object), x86 loads
  # any alignment, and instrumenting every pointer access for them doubled the tree's compile
  # time (sched/cycle's batch: 30.0 s with them, 16.7 s without; docs/ci.md). Every other UBSan
  # check stays (signed overflow, shifts, bool and enum values, array bounds, vptr, ...).
  # Each test binary runs as 4 GoogleTest shards rather than a process per test (ARBITER_TEST_SHARDS).
  timed "configure (build-sanitize)" cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 \
    -DARBITER_FUZZ=OFF -DARBITER_WERROR=OFF -DARBITER_TEST_SHARDS=4 \
    -DCMAKE_CXX_FLAGS="-fsanitize=address,undefined -fno-sanitize=alignment,null,object-size -fno-sanitize-recover=undefined -fno-omit-frame-pointer -O1"
  timed "build (build-sanitize)" cmake --build build-sanitize -j2
  timed "tests (build-sanitize)" ctest --test-dir build-sanitize --output-on-failure -j2 "${ctest_args[@]}"
fi
