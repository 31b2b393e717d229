#!/usr/bin/env bash
# Runs every `performance` scenario under bench/scenarios RUNS times (default 3), one process per
# run, and prints a Markdown table of medians: pods/s, attempt and decision p50/p99, preemptions,
# victims, peak RSS, and the ratio to the scenario's anchor. Run after the build:
#   ./scripts/bench-performance.sh [RUNS] [build/bin/arbiter]
# Takes several minutes; prints a progress line per run on stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS="${1:-3}"
ARBITER="${2:-build/bin/arbiter}"
OUT=$(mktemp)
trap 'rm -f "$OUT"' EXIT
for f in bench/scenarios/*.yaml; do
  grep -q '^labels: \[performance\]' "$f" || continue
  for ((i = 1; i <= RUNS; i++)); do
    echo "bench-performance: $f run $i/$RUNS" >&2
    "$ARBITER" bench "$f" -o json 2>/dev/null >>"$OUT"
  done
done
python3 - "$OUT" <<'PY'
import json, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    j = json.loads(line)
    runs.setdefault(j["scenario"], []).append(j)
def med(rs, f):
    return statistics.median(f(r) for r in rs)
print("| scenario | runs (pods/s) | median pods/s | attempt p50 / p99 (µs) | decision p50 / p99 (µs) "
      "| preemptions | victims | peak RSS (MiB) | anchor | ratio |")
print("|---|---|---|---|---|---|---|---|---|---|")
for name, rs in runs.items():
    if "nomad" in rs[0]:
        rate = lambda r: r["nomad"]["placementsPerSecond"]
    else:
        rate = lambda r: r["podsPerSecond"]
    a = rs[0].get("anchor", {})
    anchor = a.get("podsPerSecond") and f'{a["podsPerSecond"]:g} pods/s' or \
             a.get("attemptP99Micros") and f'p99 {a["attemptP99Micros"] / 1000:g} ms' or "—"
    ratio = f'{med(rs, lambda r: r.get("ratioToAnchor", 0)):.0f}×' if "ratioToAnchor" in rs[0] else "—"
    lat = lambda k, p: med(rs, lambda r: r.get(k, {}).get(p, 0))
    failed = sum(len(r["expectationsFailed"]) for r in rs)
    print(f'| {name}{" (EXPECTATIONS FAILED)" if failed else ""} | {", ".join(f"{rate(r):.0f}" for r in rs)} '
          f'| **{med(rs, rate):.0f}** | {lat("attemptLatencyMicros", "p50"):.1f} / {lat("attemptLatencyMicros", "p99"):.1f} '
          f'| {lat("decisionLatencyMicros", "p50"):.1f} / {lat("decisionLatencyMicros", "p99"):.1f} '
          f'| {rs[0].get("preemptions", 0)} | {rs[0].get("victims", 0)} '
          f'| {med(rs, lambda r: r["peakRssKiB"]) / 1024:.1f} | {anchor} | {ratio} |')
PY
