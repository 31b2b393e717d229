#!/usr/bin/env bash
# arbiter schedule's end-to-end tests (tests/e2e/schedule_e2e_test.py) against the real
# kube-apiserver v1.37.2: each test brings up its own control plane (scripts/upstream-cluster.sh:
# etcd, kube-apiserver, kube-controller-manager, and `arbiter nodes` as the kubelets) and takes it
# down. The same tests run against `arbiter serve --no-scheduler` in the README's test command.
set -euo pipefail
../scripts/upstream-cluster.sh up --build-only --scheduler kube --arbiter "$ARBITER_BINARY" --dir "$(mktemp -d)"
UPSTREAM_CLUSTER_BUILT=1 ARBITER_E2E_API=upstream python3 ../tests/e2e/schedule_e2e_test.py "$ARBITER_BINARY"
