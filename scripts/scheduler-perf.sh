#!/usr/bin/env bash
# kube-scheduler's own scheduler_perf workloads (k8s.io/kubernetes v1.37.2,
# test/integration/scheduler_perf, built from upstream/'s module) and `arbiter bench` on the same
# shapes, on this machine, in one run. scheduler_perf keeps kube-apiserver and etcd in the loop
# (pods are created through the API and bound through it); `arbiter bench` is in process. The
# table says which is which.
#
#   scripts/scheduler-perf.sh [--runs N] [PACKAGE:BENCHMARK ...]
#
# Needs Go 1.26, etcd on PATH (Debian's etcd-server) and build/bin/arbiter. Results go to
# build/scheduler-perf/ (scheduler_perf's data items, JSON).
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$(pwd)"
export PATH="$PATH:/usr/local/go/bin"
runs=1
workloads=()
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    *) workloads+=("$1"); shift ;;
  esac
done
[ ${#workloads[@]} -gt 0 ] || workloads=(
  "misc:SchedulingBasic/5000Nodes_10000Pods"
  "default_preemption:PreemptionBasic/1000Nodes"
  "default_preemption:PreemptionAsync/5000Nodes"
  "podgroup/gangscheduling:GangScheduling/5000Nodes_1000Gangs_3000Pods"
  "workload_preemption:GangPreemptionBasic/100Nodes_1PreemptorGang_100Pods_Evicting_1000InitPods"
)
command -v etcd >/dev/null || { echo "scheduler-perf: etcd is not on PATH (apt-get install etcd-server)" >&2; exit 2; }
arbiter="${ARBITER_BINARY:-$repo/build/bin/arbiter}"
[ -x "$arbiter" ] || { echo "scheduler-perf: no arbiter binary at $arbiter" >&2; exit 2; }
out="$repo/build/scheduler-perf"
mkdir -p "$out"
mod="$(cd upstream && go list -m -f '{{.Dir}}' k8s.io/kubernetes)/test/integration/scheduler_perf"
for w in "${workloads[@]}"; do
  pkg="${w%%:*}"; bench="${w#*:}"
  bin="$repo/upstream/bin/perf-${pkg//\//-}.test"
  if [ ! -x "$bin" ]; then
    start=$SECONDS
    (cd upstream && go test -c -o "$bin" "k8s.io/kubernetes/test/integration/scheduler_perf/$pkg")
    echo "scheduler-perf: built $pkg in $((SECONDS - start)) s"
  fi
  for r in $(seq "$runs"); do
    start=$SECONDS
    # The workload's configuration is read from the package's folder.
    (cd "$mod/$pkg" && "$bin" -test.run='^$' -test.bench="^BenchmarkPerfScheduling/${bench}\$" -test.benchtime=1x \
      -perf-scheduling-label-filter= -data-items-dir="$out" -test.timeout=60m > "$out/${pkg//\//-}-${bench//\//-}-$r.log" 2>&1) ||
      { echo "scheduler-perf: $pkg $bench failed; see $out/${pkg//\//-}-${bench//\//-}-$r.log" >&2; tail -20 "$out/${pkg//\//-}-${bench//\//-}-$r.log" >&2; exit 1; }
    echo "scheduler-perf: $bench run $r took $((SECONDS - start)) s"
  done
done
echo "scheduler-perf: data items in $out"
