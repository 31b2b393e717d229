#!/usr/bin/env bash
# Load benchmark of `arbiter serve`: for each run, a fresh server on the SQLite store (in a
# temporary directory, on a free port), 100 simulated nodes of 16 CPUs applied with kubectl, then
# `arbiter bench --scenario ApiLoad` creating PODS pods over 8 keep-alive connections and waiting
# until all are bound. Prints one JSON line per run. With STORE=etcd, each run's server uses a
# fresh single etcd member (Debian's etcd-server) on free ports instead of SQLite. Run after the
# build:
#   [STORE=sqlite|etcd] ./scripts/bench-serve.sh [RUNS=3] [PODS=10000] [build/bin/arbiter]
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS="${1:-3}"
PODS="${2:-10000}"
ARBITER="$(realpath "${3:-build/bin/arbiter}")"
nodes=$(mktemp)
trap 'rm -f "$nodes"' EXIT
for i in $(seq 0 99); do
  printf -- '---\napiVersion: v1\nkind: Node\nmetadata: {name: node-%d}\nstatus: {allocatable: {cpu: "16", memory: 64Gi, pods: "110"}}\n' "$i"
done > "$nodes"
for ((run = 1; run <= RUNS; run++)); do
  dir=$(mktemp -d)
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  store_flags=()
  etcd_pid=""
  if [ "${STORE:-sqlite}" = "etcd" ]; then
    read -r cport pport < <(python3 -c 'import socket; a=socket.socket(); a.bind(("127.0.0.1",0)); b=socket.socket(); b.bind(("127.0.0.1",0)); print(a.getsockname()[1], b.getsockname()[1])')
    etcd --name bench --data-dir "$dir/etcd" --listen-client-urls "http://127.0.0.1:$cport" \
      --advertise-client-urls "http://127.0.0.1:$cport" --listen-peer-urls "http://127.0.0.1:$pport" \
      --initial-advertise-peer-urls "http://127.0.0.1:$pport" --initial-cluster "bench=http://127.0.0.1:$pport" \
      2>"$dir/etcd.log" &
    etcd_pid=$!
    for _ in $(seq 100); do curl -sf "http://127.0.0.1:$cport/health" >/dev/null && break; sleep 0.1; done
    store_flags=(--store etcd --etcd-servers "http://127.0.0.1:$cport")
  fi
  "$ARBITER" serve --listen "127.0.0.1:$port" --data-dir "$dir" "${store_flags[@]}" 2>"$dir/server.log" &
  pid=$!
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break; sleep 0.1; done
  KUBECONFIG=/dev/null kubectl -s "http://127.0.0.1:$port" apply -f "$nodes" >/dev/null
  # With leader election (etcd) the replica schedules once it holds the lease.
  for _ in $(seq 100); do curl -s "http://127.0.0.1:$port/metrics" | grep -q 'leader_election_master_status{name="arbiter-scheduler"} 0' || break; sleep 0.1; done
  echo "bench-serve: run $run/$RUNS, $PODS pods, ${STORE:-sqlite} store" >&2
  "$ARBITER" bench --scenario ApiLoad --server "http://127.0.0.1:$port" --pods "$PODS" 2>/dev/null || true
  kill -TERM "$pid"
  wait "$pid" || true
  if [ -n "$etcd_pid" ]; then kill -TERM "$etcd_pid"; wait "$etcd_pid" || true; fi
  rm -rf "$dir"
done
