#!/usr/bin/env bash
# How `arbiter simulate` grows with nodes and pods: for each size, RUNS runs of a generated
# Borg-shaped day (`--generate borg --duration 24h`, the default load), each timed as a whole
# process (wall seconds, peak RSS from /usr/bin/time), and the report's pods, preemptions,
# utilisation and cycles. Prints one JSON line per run, then the median per size. Run after the
# build:
#   ./scripts/bench-simulate.sh [RUNS=3] [build/bin/arbiter] [SIZES="200:4000 1000:20000 5000:100000"]
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS="${1:-3}"
ARBITER="$(realpath "${2:-build/bin/arbiter}")"
SIZES="${3:-200:4000 1000:20000 5000:100000}"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for size in $SIZES; do
  nodes="${size%%:*}"
  pods="${size##*:}"
  for ((run = 1; run <= RUNS; run++)); do
    /usr/bin/time -f '%e %M' -o "$out/time" "$ARBITER" simulate --generate borg --nodes "$nodes" --pods "$pods" \
      --duration 24h -o json > "$out/report.json"
    python3 - "$nodes" "$pods" "$out/time" "$out/report.json" <<'PY'
import json, sys
nodes, pods, time_file, report_file = sys.argv[1:]
wall, rss_kb = open(time_file).read().split()[-2:]
r = json.load(open(report_file))
t = r["totals"]
print(json.dumps({"nodes": int(nodes), "pods": int(pods), "wallSeconds": float(wall),
                  "peakRssMiB": round(int(rss_kb) / 1024, 1), "podsMade": t["pods"],
                  "podsPerSecond": round(t["pods"] / max(float(wall), 1e-9)),
                  "preempted": t["preemptions"], "utilisation": t["utilisation"], "cycles": r["cycles"]}))
PY
  done | tee "$out/runs-$nodes"
  python3 - "$out/runs-$nodes" <<'PY'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print("median", json.dumps({k: statistics.median(r[k] for r in runs)
                            for k in ("nodes", "pods", "wallSeconds", "peakRssMiB", "podsPerSecond")}))
PY
done
