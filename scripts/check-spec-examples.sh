#!/usr/bin/env bash
# Checks `arbiter plan` against a folder of worked examples in the format of tests/conformance/
# (which CTest checks itself): scripts/check-spec-examples.sh DIR (a folder of example folders,
# each with its cluster files and expected.json). Fails when DIR is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:?usage: scripts/check-spec-examples.sh EXAMPLES_DIR}"
[ -d "$dir" ] || { echo "check-spec-examples: $dir is not a folder" >&2; exit 2; }
cmake --build build -j2 --target spec_examples_check arbiter
ARBITER_SPEC_EXAMPLES="$(cd "$dir" && pwd)" build/tests/spec_examples_check
