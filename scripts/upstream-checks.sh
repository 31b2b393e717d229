#!/usr/bin/env bash
# The checks that put upstream Kubernetes beside Arbiter: test tools built with Go from the
# module in upstream/ (its own go.mod and go.sum; Go 1.26 at /usr/local/go or on PATH). They are
# a step of .ci/run of their own, after the README's test command, and never part of it: Arbiter
# builds, runs and passes scripts/test.sh without Go.
#
# Each check is an executable upstream/checks/NAME.sh, run in name order from upstream/ with
# ARBITER_BINARY set (default: build-fresh/bin/arbiter, the binary the README's commands built
# on CI's fresh root, else build/bin/arbiter); each prints its wall time.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$(pwd)"
if [ ! -f upstream/go.mod ]; then
  echo "upstream-checks: upstream/ holds no Go module: no upstream check to run"
  exit 0
fi
export PATH="$PATH:/usr/local/go/bin"
command -v go >/dev/null || { echo "upstream-checks: go is not installed (want Go 1.26 at /usr/local/go)" >&2; exit 2; }
if [ -z "${ARBITER_BINARY:-}" ]; then
  for candidate in "$repo/build-fresh/bin/arbiter" "$repo/build/bin/arbiter"; do
    if [ -x "$candidate" ]; then ARBITER_BINARY="$candidate"; break; fi
  done
fi
[ -n "${ARBITER_BINARY:-}" ] || { echo "upstream-checks: no arbiter binary (build/bin/arbiter); set ARBITER_BINARY" >&2; exit 2; }
ARBITER_BINARY="$(cd "$(dirname "$ARBITER_BINARY")" && pwd)/$(basename "$ARBITER_BINARY")"  # checks run in upstream/
export ARBITER_BINARY
shopt -s nullglob
checks=(upstream/checks/*.sh)
[ ${#checks[@]} -gt 0 ] || { echo "upstream-checks: upstream/checks/ holds no check" >&2; exit 1; }
for check in "${checks[@]}"; do
  start=$SECONDS
  echo "== upstream-checks: $check =="
  (cd upstream && "../$check")
  echo "== upstream-checks: $check took $((SECONDS - start)) s =="
done
