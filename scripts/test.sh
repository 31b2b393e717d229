#!/usr/bin/env bash
# Installs dependencies, builds Arbiter with warnings as errors, and runs every test with CTest
# (unit and scenario tests, the CLI tests, and a bounded libFuzzer run over the loader).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
cmake -S . -B build -DARBITER_WERROR=ON
cmake --build build -j2
ctest --test-dir build --output-on-failure -j2
