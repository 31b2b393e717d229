#!/usr/bin/env bash
# Where the bytes of `arbiter serve` go: runs a serve benchmark with jemalloc's sampling heap
# profiler in the server and splits the heap in use at the last profile (taken each GiB
# allocated, so near the peak) into the server's components (scripts/memory_breakdown.py).
#
#   scripts/memory-profile.sh [bench flags...]
#   (default: --scenario ServeSchedulingBasic --nodes 5000 --initial-pods 40000 --pods 10000)
#
# Profiles the usual build (build/, which links Debian's jemalloc) with jemalloc's sampling
# profiler switched on by MALLOC_CONF. ARBITER_MEMPROF_BUILD names another tree; one built with
# -DARBITER_ALLOCATOR=system gets jemalloc preloaded, so that the profile is jemalloc's either way
# (a tcmalloc build cannot be profiled so). Needs libjemalloc-dev (jeprof; install-deps.sh has it).
set -euo pipefail
cd "$(dirname "$0")/.."
jemalloc="$(ls /usr/lib/*/libjemalloc.so.2 2>/dev/null | head -1 || true)"
if [ -z "$jemalloc" ] || ! command -v jeprof >/dev/null; then
  echo "memory-profile: needs jemalloc and jeprof: apt-get install libjemalloc2 libjemalloc-dev" >&2
  exit 2
fi
build="${ARBITER_MEMPROF_BUILD:-build}"
[ -f "$build/CMakeCache.txt" ] || cmake -S . -B "$build" >/dev/null
cmake --build "$build" --target arbiter -j2
exe="$build/bin/arbiter"
preload="$jemalloc"
if ldd "$exe" | grep -q libjemalloc; then
  preload=""  # its own jemalloc
elif ldd "$exe" | grep -q libtcmalloc; then
  echo "memory-profile: $exe links tcmalloc; profile a jemalloc or -DARBITER_ALLOCATOR=system build" >&2
  exit 2
fi
[ $# -gt 0 ] || set -- --scenario ServeSchedulingBasic --nodes 5000 --initial-pods 40000 --pods 10000
out="$(mktemp -d /tmp/arbiter-memprof.XXXXXX)"
echo "== profiles in $out"
MALLOC_CONF="prof:true,lg_prof_sample:18,lg_prof_interval:30,prof_prefix:$out/heap" LD_PRELOAD="$preload" \
  "$exe" bench "$@" --runs 1 &
bench=$!
wait "$bench"
# The server is the process with the most profiles other than the benchmark itself.
server="$(ls "$out" | sed -n 's/^heap\.\([0-9]*\)\..*/\1/p' | grep -v "^$bench\$" | sort | uniq -c | sort -rn | awk 'NR==1{print $2}')"
[ -n "$server" ] || { echo "memory-profile: the server wrote no profile (did it allocate 1 GiB?)" >&2; exit 1; }
last="$(ls "$out"/heap."$server".*.heap | sort -t. -k3 -n | tail -1)"
echo "== the server's last profile: $last"
jeprof --collapsed --inuse_space "$exe" "$last" 2>/dev/null > "$out/collapsed.txt"
pods=0
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  case "${args[$i]}" in
    --pods | --initial-pods) pods=$((pods + ${args[$((i + 1))]})) ;;
  esac
done
python3 scripts/memory_breakdown.py "$out/collapsed.txt" --pods "$pods"
