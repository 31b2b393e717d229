#!/usr/bin/env bash
# arbiter schedule's end-to-end tests (tests/e2e/schedule_e2e_test.py) against the real
# kube-apiserver v1.37.2: each test brings up its own control plane (scripts/upstream-cluster.sh:
# etcd, kube-apiserver, kube-controller-manager, and `arbiter nodes` as the kubelets) and takes it
# down. The same tests run against `arbiter serve --no-scheduler` in the README's test command.
# The test classes run in two shards at once (each test has its own cluster and ports): they
# mostly wait on leases and backoffs, so two at a time take 146 s where one after another took 266.
set -euo pipefail
../scripts/upstream-cluster.sh up --build-only --scheduler kube --arbiter "$ARBITER_BINARY" --dir "$(mktemp -d)"
tests=../tests/e2e/schedule_e2e_test.py
mapfile -t classes < <(sed -n 's/^class \([A-Za-z0-9_]*\)(ScheduleTestCase):.*/\1/p' "$tests")
[ ${#classes[@]} -gt 0 ] || { echo "30-schedule-e2e: no test class found in $tests" >&2; exit 1; }
shard_a=() shard_b=()
for i in "${!classes[@]}"; do
  if (( i % 2 == 0 )); then shard_a+=("${classes[$i]}"); else shard_b+=("${classes[$i]}"); fi
done
logs="$(mktemp -d)"
run_shard() {  # NAME CLASS...
  local name="$1"
  shift
  UPSTREAM_CLUSTER_BUILT=1 ARBITER_E2E_API=upstream /usr/bin/python3 "$tests" "$ARBITER_BINARY" "$@" > "$logs/$name.log" 2>&1
}
run_shard a "${shard_a[@]}" & pid_a=$!
run_shard b "${shard_b[@]}" & pid_b=$!
status=0
wait "$pid_a" || status=1
wait "$pid_b" || status=1
cat "$logs/a.log" "$logs/b.log"
rm -rf "$logs"
exit "$status"
