#!/usr/bin/env bash
# The tools' own tests: input decoding and the comparison of plans.
set -euo pipefail
go test ./internal/... ./cmd/lincheck/
