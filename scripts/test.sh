#!/usr/bin/env bash
# Installs dependencies, builds Arbiter with warnings as errors, and runs every test with CTest
# (unit and scenario tests, the CLI tests, and a bounded libFuzzer run over the loader).
# With ARBITER_SANITIZE=1 it also builds a second tree with AddressSanitizer, UndefinedBehavior-
# Sanitizer and LeakSanitizer and runs the tests there (CI does).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
# (ON is also the default with g++ 12, so this reuses what the README's first command built.)
cmake -S . -B build -DARBITER_WERROR=ON
cmake --build build -j2
ctest --test-dir build --output-on-failure -j2
if [ "${ARBITER_SANITIZE:-0}" = "1" ]; then
  echo "== the same tests under ASan, UBSan and LSan =="
  # Warnings are enforced in the main tree; optimisation levels change what g++ warns about.
  cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=Debug -DARBITER_FUZZ=OFF -DARBITER_WERROR=OFF \
    -DCMAKE_CXX_FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -O1"
  cmake --build build-sanitize -j2
  ctest --test-dir build-sanitize --output-on-failure -j2
fi
