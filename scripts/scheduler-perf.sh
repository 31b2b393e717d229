#!/usr/bin/env bash
# kube-scheduler's own scheduler_perf workloads (k8s.io/kubernetes v1.37.2,
# test/integration/scheduler_perf, built from upstream/'s module) and `arbiter bench` on the same
# shapes, on this machine, in one run. scheduler_perf keeps kube-apiserver and etcd in the loop
# (pods are created through the API and bound through it); `arbiter bench` is in process. The
# table says which is which.
#
#   scripts/scheduler-perf.sh [--runs N] [PACKAGE:BENCHMARK ...]
#
# Needs Go 1.26 and build/bin/arbiter. Results go to
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
# scheduler_perf's framework serves etcd on a unix socket, which Debian's etcd 3.4 refuses: etcd
# 3.7 (the release kube-apiserver's client pins) is built from its module and put first on PATH.
(cd upstream && go build -o bin/etcd ./cmd/etcd)
export PATH="$repo/upstream/bin:$PATH"
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
    log="$out/${pkg//\//-}-${bench//\//-}-$r.log"
    touch "$out/.run-start"
    # A workload below upstream's own CI threshold (set for its CI machines) still measured:
    # only a run that wrote no throughput is a failure.
    (cd "$mod/$pkg" && "$bin" -test.run='^$' -test.bench="^BenchmarkPerfScheduling/${bench}\$" -test.benchtime=1x \
      -perf-scheduling-label-filter= -data-items-dir="$out" -test.timeout=60m > "$log" 2>&1) || true
    items="$(find "$out" -maxdepth 1 -name 'BenchmarkPerfScheduling_*.json' -newer "$out/.run-start" | head -1)"
    # Throughput workloads report SchedulingThroughput; the gang-preemption ones the duration of
    # scheduling their measured pods (SchedulingDuration).
    if [ -z "$items" ] || ! grep -q 'SchedulingThroughput\|SchedulingDuration' "$items"; then
      echo "scheduler-perf: $pkg $bench failed; see $log" >&2; tail -20 "$log" >&2; exit 1
    fi
    python3 - "$items" "$bench" "$r" "$((SECONDS - start))" <<'PY'
import json, sys
items, bench, run, secs = sys.argv[1:]
for i in json.load(open(items))["dataItems"]:
    d = i["data"]
    if i["labels"].get("Metric") == "SchedulingThroughput":
        print(f"scheduler-perf: {bench} run {run}: SchedulingThroughput average {d['Average']:.1f} pods/s, "
              f"p50 {d['Perc50']:.1f}, p90 {d['Perc90']:.1f} (upstream's CI threshold {d.get('AverageThreshold', '-')}); {secs} s")
    elif i["labels"].get("Metric") == "SchedulingDuration":
        print(f"scheduler-perf: {bench} run {run}: SchedulingDuration {d['Duration']:.3f} s; {secs} s")
PY
  done
done
echo "scheduler-perf: data items in $out"
