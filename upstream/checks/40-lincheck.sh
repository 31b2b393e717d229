#!/usr/bin/env bash
# Linearizability under faults (cmd/lincheck): histories of 8 clients on ConfigMaps, checked with
# Porcupine, while a part is SIGKILLed and started again: serve on SQLite, serve on a 3-member
# etcd with two replicas, and the real kube-apiserver (the baseline). A bounded run here; the
# 200-history runs are in docs/consistency.md. The deliberately broken variant (a stale read
# cache) must be caught.
set -euo pipefail
go build -o bin/lincheck ./cmd/lincheck
go build -o bin/etcd ./cmd/etcd
n="${LINCHECK_HISTORIES:-10}"
bin/lincheck --target serve-sqlite --arbiter "$ARBITER_BINARY" --histories "$n" --seed 1
bin/lincheck --target serve-etcd --arbiter "$ARBITER_BINARY" --etcd bin/etcd --histories "$n" --seed 2
UPSTREAM_CLUSTER_BUILT=1 bin/lincheck --target upstream --arbiter "$ARBITER_BINARY" --histories "${LINCHECK_UPSTREAM_HISTORIES:-3}" --seed 3
status=0
log="$(mktemp)"
bin/lincheck --target serve-sqlite --arbiter "$ARBITER_BINARY" --histories 5 --seed 4 --broken stale-reads \
  > "$log" 2>&1 || status=$?
tail -1 "$log"
if [ "$status" != 1 ]; then  # 0: nothing caught; 2: it did not run
  cat "$log"
  echo "lincheck: the broken variant (stale reads) was not caught (exit $status)" >&2
  exit 1
fi
echo "lincheck: the broken variant was caught"
