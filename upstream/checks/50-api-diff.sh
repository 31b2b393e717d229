#!/usr/bin/env bash
# arbiter serve against kube-apiserver v1.37.2, response by response (tests/apidiff): every case
# of the corpus is replayed against both, with the same tokens, and every difference in status,
# reason, causes and body shape must be one tests/apidiff/known-differences.txt lists with its
# reason (a new one fails, and so does a listed one that no longer occurs). The report is
# written to build/apidiff-report.md (docs/api-differences.md is the committed copy).
set -euo pipefail
dir="$(mktemp -d)"
serve_dir="$dir/serve"
mkdir -p "$serve_dir"
cleanup() {
  [ -n "${serve_pid:-}" ] && kill "$serve_pid" 2>/dev/null && wait "$serve_pid" 2>/dev/null || true
  ../scripts/upstream-cluster.sh down --dir "$dir/cluster" >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap cleanup EXIT
UPSTREAM_CLUSTER_BUILT=1 ../scripts/upstream-cluster.sh up --arbiter "$ARBITER_BINARY" --dir "$dir/cluster" --scheduler none
# shellcheck disable=SC1091
. "$dir/cluster/cluster.env"
# serve as the cluster is: the same tokens, no scheduler (kube-scheduler does not run either),
# its simulated kubelets (as `arbiter nodes` is the cluster's).
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
"$ARBITER_BINARY" serve --listen "127.0.0.1:$port" --data-dir "$serve_dir" --no-scheduler \
  --token-auth-file "$dir/cluster/tokens.csv" > "$dir/serve.log" 2>&1 &
serve_pid=$!
for _ in $(seq 100); do
  curl -s -o /dev/null "http://127.0.0.1:$port/readyz" && break
  kill -0 "$serve_pid" 2>/dev/null || { cat "$dir/serve.log"; exit 1; }
  sleep 0.1
done
mkdir -p ../build
/usr/bin/python3 ../tests/apidiff/apidiff.py run \
  --server "serve=http://127.0.0.1:$port" --server "kube-apiserver=https://127.0.0.1:$API_PORT" \
  --ca "$dir/cluster/pki/ca.crt" --token "$ADMIN_TOKEN" --user-token "$USER_TOKEN" \
  --known ../tests/apidiff/known-differences.txt --report ../build/apidiff-report.md
