#!/usr/bin/env bash
# kube-scheduler and `arbiter schedule` side by side through the real kube-apiserver v1.37.2:
# `arbiter bench`'s Schedule* scenarios against a fresh control plane per run
# (scripts/upstream-cluster.sh: etcd, kube-apiserver, kube-controller-manager, `arbiter nodes` as
# the kubelets), each scheduler with the same client rate limits. Needs Go (upstream/).
#
#   scripts/bench-upstream.sh [--runs N] [--nodes N] [--pods N] [--qps Q] [--burst B]
#                             [--scenario ScheduleSchedulingBasic|SchedulePreemptionBasic]
#
# Prints one JSON line per run (arbiter bench's), then per scheduler the median pods/s and the
# ratio arbiter / kube-scheduler. Runs alternate between the schedulers, so that a slow spell of
# the machine falls on both.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$(pwd)"
runs=3 nodes=500 pods=2000 qps="" burst="" scenario=ScheduleSchedulingBasic
arbiter="${ARBITER_BINARY:-$repo/build/bin/arbiter}"
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --nodes) nodes="$2"; shift 2 ;;
    --pods) pods="$2"; shift 2 ;;
    --qps) qps="$2"; shift 2 ;;
    --burst) burst="$2"; shift 2 ;;
    --scenario) scenario="$2"; shift 2 ;;
    *) echo "bench-upstream: unknown argument $1" >&2; exit 2 ;;
  esac
done
limits=()
[ -n "$qps" ] && limits+=(--scheduler-qps "$qps")
[ -n "$burst" ] && limits+=(--scheduler-burst "$burst")
[ "${UPSTREAM_CLUSTER_BUILT:-}" = 1 ] || scripts/upstream-cluster.sh up --build-only --scheduler kube --arbiter "$arbiter"
export UPSTREAM_CLUSTER_BUILT=1
out="$(mktemp)"
for run in $(seq "$runs"); do
  for scheduler in arbiter kube; do
    dir="$(mktemp -d)"
    scripts/upstream-cluster.sh up --dir "$dir" --arbiter "$arbiter" > /dev/null
    echo "bench-upstream: run $run/$runs, $scheduler" >&2
    status=0
    "$arbiter" bench --scenario "$scenario" --nodes "$nodes" --pods "$pods" --runs 1 \
      --kubeconfig "$dir/kubeconfig" --scheduler "$scheduler" --kube-scheduler "$repo/upstream/bin/kube-scheduler" \
      "${limits[@]}" | tee -a "$out" || status=$?
    scripts/upstream-cluster.sh down --dir "$dir" > /dev/null
    if [ "$status" != 0 ]; then echo "bench-upstream: the $scheduler run failed; the cluster's logs are in $dir" >&2; exit 1; fi
    rm -rf "$dir"
  done
done
python3 - "$out" <<'EOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
key = "preemptorsPerSecond" if any("preemptorsPerSecond" in r for r in rows) else "podsPerSecond"
med = {}
for s in ("arbiter", "kube"):
    v = [r[key] for r in rows if r.get("scheduler") == s]
    med[s] = statistics.median(v)
    print(f"bench-upstream: {s}: {key} {', '.join(f'{x:.1f}' for x in v)}; median {med[s]:.1f}")
print(f"bench-upstream: ratio arbiter / kube-scheduler: {med['arbiter'] / med['kube']:.2f}")
EOF
