#!/usr/bin/env bash
# Plans random clusters with both `arbiter plan` and the real kube-scheduler v1.37.2 (in process,
# upstream/cmd/kube-reference) and compares them decision for decision; see upstream/README.md.
#
#   scripts/upstream-diff.sh [--cases N] [--seed S] [--family F[,F...]] [--out DIR] [--min-agreement PCT]
#
# Needs Go 1.26 (/usr/local/go) and the Go module proxy; uses build/bin/arbiter (or
# $ARBITER_BINARY). Prints a report per family and, last, `upstream-diff: A agree, D disagree, U
# unusable`; each disagreement is minimized and written to DIR (default upstream-diff-out/).
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$(pwd)"
export PATH="$PATH:/usr/local/go/bin"
command -v go >/dev/null || { echo "upstream-diff: go is not installed (want Go 1.26 at /usr/local/go)" >&2; exit 2; }
: "${ARBITER_BINARY:=$repo/build/bin/arbiter}"
[ -x "$ARBITER_BINARY" ] || { echo "upstream-diff: no arbiter binary at $ARBITER_BINARY (build it, or set ARBITER_BINARY)" >&2; exit 2; }
out="$repo/upstream-diff-out"
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out="$(mkdir -p "$2" && cd "$2" && pwd)"; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
start=$SECONDS
(cd upstream && go build -o bin/ ./cmd/...)
echo "upstream-diff: tools built in $((SECONDS - start)) s"
exec upstream/bin/upstream-diff --arbiter "$ARBITER_BINARY" --out "$out" "${args[@]}"
