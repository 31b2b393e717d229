#!/usr/bin/env bash
# Scale curves: cost per scheduling attempt and per preemption decision against cluster size,
# with a fitted exponent (the slope of log cost against log nodes), rendered with gnuplot into
# docs/scale-curves.svg and recorded in docs/scale-curves.dat. Run after the build:
#   ./scripts/scale-curves.sh [build/bin/arbiter]
# Takes a few minutes; prints a line per run. Needs gnuplot (Debian: gnuplot-nox) for the SVG.
set -euo pipefail
cd "$(dirname "$0")/.."
ARBITER="${1:-build/bin/arbiter}"
DATA=docs/scale-curves.dat
: > "$DATA.tmp"

run() {  # label nodes args... -> one line "label nodes p50_us p99_us pods_per_s"
  local label=$1 nodes=$2
  shift 2
  local json
  json=$("$ARBITER" bench --nodes "$nodes" "$@" 2>/dev/null | head -1)
  python3 - "$label" "$nodes" "$json" <<'PY' | tee -a "$DATA.tmp"
import json, sys
label, nodes, j = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])
lat = j["decisionLatencyMicros"] if label.startswith("preemption") else j["attemptLatencyMicros"]
print(f'{label} {nodes} {lat["p50"]:.3f} {lat["p99"]:.3f} {j["podsPerSecond"]:.0f}')
PY
}

for n in 500 5000 50000; do
  run scheduling "$n" --scenario SchedulingBasic --initial-pods "$n" --pods 10000
done
for n in 500 5000 50000; do
  run preemption "$n" --scenario PreemptionBasic
done
# Dense: nodes of 16 CPUs and 64Gi with 100 pods already on each (110 allowed), then 5000 more.
run_file() {  # label nodes scenario-file
  local label=$1 nodes=$2 file=$3 json
  json=$("$ARBITER" bench "$file" 2>/dev/null | head -1)
  python3 - "$label" "$nodes" "$json" <<'PY' | tee -a "$DATA.tmp"
import json, sys
label, nodes, j = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])
lat = j["attemptLatencyMicros"]
print(f'{label} {nodes} {lat["p50"]:.3f} {lat["p99"]:.3f} {j["podsPerSecond"]:.0f}')
PY
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for n in 500 5000; do
  cat > "$tmp/dense-$n.yaml" <<YAML
name: Dense/${n}Nodes_100PodsPerNode
steps:
- createNodes: {count: $n, cpu: "16", memory: 64Gi, maxPods: 110}
- createPods: {count: $((n * 100))}
- barrier: {}
- createPods: {count: 5000, measure: true}
- barrier: {}
YAML
  run_file dense "$n" "$tmp/dense-$n.yaml"
done

python3 - "$DATA.tmp" "$DATA" <<'PY'
import math, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
out = open(sys.argv[2], "w")
out.write("# label nodes p50_us p99_us pods_per_s  (docs/scale-curves.dat, written by scripts/scale-curves.sh)\n")
for label in ("scheduling", "preemption", "dense"):
    pts = [(int(r[1]), float(r[2])) for r in rows if r[0] == label]
    for r in rows:
        if r[0] == label:
            out.write(" ".join(r) + "\n")
    out.write("\n\n")
    if len(pts) >= 2:
        xs = [math.log(n) for n, _ in pts]
        ys = [math.log(max(c, 1e-3)) for _, c in pts]
        mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
        slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
        print(f"{label}: cost per attempt grows as nodes^{slope:.2f} (p50, {len(pts)} sizes)")
PY
rm -f "$DATA.tmp"

if command -v gnuplot >/dev/null; then
  gnuplot <<'GP'
set terminal svg size 760,460 dynamic font "sans,11"
set output "docs/scale-curves.svg"
set title "Arbiter: cost per attempt against cluster size (p50, log-log)"
set logscale xy
set xlabel "nodes"
set ylabel "microseconds"
set key top left
set grid
plot "docs/scale-curves.dat" index 0 using 2:3 with linespoints title "scheduling attempt (SchedulingBasic)", \
     "docs/scale-curves.dat" index 1 using 2:3 with linespoints title "preemption decision (PreemptionBasic)", \
     "docs/scale-curves.dat" index 2 using 2:3 with linespoints title "scheduling attempt, 100 pods per node"
GP
  echo "wrote docs/scale-curves.svg"
else
  echo "gnuplot not found (Debian: apt-get install gnuplot-nox); docs/scale-curves.dat written" >&2
fi
