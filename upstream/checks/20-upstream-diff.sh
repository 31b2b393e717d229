#!/usr/bin/env bash
# A sample of every family of random clusters, planned by `arbiter plan` and kube-scheduler and
# compared decision for decision. The floor is the agreement measured when the comparison was
# introduced (docs/upstream-rules.md Part E); it only goes up.
set -euo pipefail
go build -o bin/ ./cmd/upstream-diff
out="$(mktemp -d)"
bin/upstream-diff --cases "${UPSTREAM_DIFF_CASES:-400}" --seed "${UPSTREAM_DIFF_SEED:-7}" \
  --arbiter "$ARBITER_BINARY" --out "$out" --minimize 10 --min-agreement "${UPSTREAM_DIFF_FLOOR:-85}"
