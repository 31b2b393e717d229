#!/usr/bin/env bash
# The project's Kubernetes worked examples (tests/conformance/, which `arbiter plan` passes in the
# README's test command) planned by the real kube-scheduler: each must give the expected outcome.
set -euo pipefail
go build -o bin/ ./cmd/check-examples
bin/check-examples ../tests/conformance
