#!/usr/bin/env bash
# A real Kubernetes control plane on the loopback interface, for Arbiter's checks against
# upstream: etcd, kube-apiserver and kube-controller-manager v1.37.2 (built from upstream/'s Go
# module; Go 1.26 at /usr/local/go), with `arbiter nodes` as the kubelets of every Node created
# through the API (Ready, heartbeats and Leases, the pods bound to them run), and kube-scheduler
# only when asked for.
#
#   scripts/upstream-cluster.sh up   [--dir D] [--scheduler kube|none] [--arbiter BIN]
#   scripts/upstream-cluster.sh down [--dir D]
#   scripts/upstream-cluster.sh restart COMPONENT [--dir D] [--kill]
#   scripts/upstream-cluster.sh stop COMPONENT [--dir D]
#   scripts/upstream-cluster.sh env  [--dir D]
#
# `up` starts from an empty etcd, writes an admin kubeconfig to D/kubeconfig (a bearer token of
# group system:masters, the server's CA) and returns once the server is ready and the `default`
# ServiceAccount exists (admission refuses pods without it). Each component logs to D/NAME.log;
# D/pids names the processes `down` stops. `stop` stops one component; `restart` stops one (SIGKILL with --kill)
# and starts it again with the same flags and ports (kube-apiserver, etcd, kube-controller-manager,
# kube-scheduler, arbiter-nodes). `env` prints the cluster's facts as shell assignments.
# `up` builds the commands first (seconds once Go's cache holds them); UPSTREAM_CLUSTER_BUILT=1
# skips that for a caller that has just built them (`up --build-only` builds and stops there).
#
# kube-apiserver serves 127.0.0.1 only, with a token file, RBAC, its default admission plugins,
# the Workload API's groups (scheduling.k8s.io/v1beta1 and v1alpha3) and the GenericWorkload and
# CompositePodGroup gates on, as Arbiter's defaults have them. D defaults to build/upstream-cluster.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$(pwd)"
export PATH="$PATH:/usr/local/go/bin"

action="${1:-}"
[ -n "$action" ] || { sed -n '2,23p' "$0" >&2; exit 2; }
shift
dir="$repo/build/upstream-cluster"
scheduler=none
arbiter="${ARBITER_BINARY:-$repo/build/bin/arbiter}"
component=""
hard=false
build_only=false
while [ $# -gt 0 ]; do
  case "$1" in
    --dir) dir="$2"; shift 2 ;;
    --scheduler) scheduler="$2"; shift 2 ;;
    --arbiter) arbiter="$2"; shift 2 ;;
    --kill) hard=true; shift ;;
    --build-only) build_only=true; shift ;;
    -*) echo "upstream-cluster: unknown flag $1" >&2; exit 2 ;;
    *) [ -z "$component" ] || { echo "upstream-cluster: one component at a time" >&2; exit 2; }; component="$1"; shift ;;
  esac
done
case "$scheduler" in kube|none) ;; *) echo "upstream-cluster: --scheduler kube or none, not $scheduler" >&2; exit 2 ;; esac
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
bin="$repo/upstream/bin"
# CompositePodGroup needs TopologyAwareWorkloadScheduling (and it GenericWorkload): kube-apiserver
# refuses to start otherwise.
gates="GenericWorkload=true,TopologyAwareWorkloadScheduling=true,CompositePodGroup=true"

log() { echo "upstream-cluster: $*" >&2; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# The command line of each component, from the ports and files `up` chose (D/cluster.env).
command_of() {
  # shellcheck disable=SC1091
  . "$dir/cluster.env"
  case "$1" in
    etcd)
      echo "$bin/etcd --name upstream --data-dir $dir/etcd --listen-client-urls http://127.0.0.1:$ETCD_PORT" \
        "--advertise-client-urls http://127.0.0.1:$ETCD_PORT --listen-peer-urls http://127.0.0.1:$ETCD_PEER_PORT" \
        "--initial-advertise-peer-urls http://127.0.0.1:$ETCD_PEER_PORT" \
        "--initial-cluster upstream=http://127.0.0.1:$ETCD_PEER_PORT --log-level warn" ;;
    kube-apiserver)
      # The endpoint reconciler refuses a loopback advertise address; with none, the `kubernetes`
      # Service has no endpoints, which nothing here uses.
      echo "$bin/kube-apiserver --etcd-servers http://127.0.0.1:$ETCD_PORT --bind-address 127.0.0.1" \
        "--advertise-address 127.0.0.1 --endpoint-reconciler-type none --secure-port $API_PORT --tls-cert-file $dir/pki/apiserver.crt" \
        "--tls-private-key-file $dir/pki/apiserver.key --client-ca-file $dir/pki/ca.crt" \
        "--token-auth-file $dir/tokens.csv --authorization-mode RBAC" \
        "--service-account-issuer https://kubernetes.default.svc.cluster.local" \
        "--service-account-key-file $dir/pki/sa.pub --service-account-signing-key-file $dir/pki/sa.key" \
        "--service-cluster-ip-range 10.96.0.0/12 --feature-gates $gates" \
        "--runtime-config scheduling.k8s.io/v1beta1=true,scheduling.k8s.io/v1alpha3=true" \
        "--profiling=false --v 1" ;;
    kube-controller-manager)
      echo "$bin/kube-controller-manager --kubeconfig $dir/kubeconfig --leader-elect=false" \
        "--bind-address 127.0.0.1 --secure-port 0 --service-account-private-key-file $dir/pki/sa.key" \
        "--root-ca-file $dir/pki/ca.crt --use-service-account-credentials=false --feature-gates $gates" \
        "--controllers * --v 1" ;;
    kube-scheduler)
      echo "$bin/kube-scheduler --kubeconfig $dir/kubeconfig --leader-elect=false --secure-port 0" \
        "--feature-gates $gates --v 1" ;;
    arbiter-nodes)
      echo "$ARBITER nodes --kubeconfig $dir/kubeconfig --leader-elect=false --kube-api-qps 0" ;;
    *) log "no component $1 (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, arbiter-nodes)"; return 2 ;;
  esac
}

start() {
  local name="$1" line
  line="$(command_of "$name")"
  # A session of its own: it outlives this script, and `down` stops it. Words split, never globbed.
  set -f
  # shellcheck disable=SC2086
  setsid $line >> "$dir/$name.log" 2>&1 < /dev/null &
  set +f
  echo "$name $!" >> "$dir/pids"
}

pid_of() { awk -v n="$1" '$1 == n { p = $2 } END { print p }' "$dir/pids" 2>/dev/null; }

stop() {
  local name="$1" signal="${2:-TERM}" pid
  pid="$(pid_of "$name")"
  [ -n "$pid" ] || return 0
  kill -"$signal" "$pid" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
  awk -v n="$name" '$1 != n' "$dir/pids" > "$dir/pids.new" && mv "$dir/pids.new" "$dir/pids"
}

wait_for() {
  local what="$1" seconds="$2"; shift 2
  local deadline=$((SECONDS + seconds))
  local pid; pid="$(pid_of "$what")"
  until "$@" > /dev/null 2>&1; do
    if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
      log "$what exited before it was ready; the end of its log:"
      tail -20 "$dir/$what.log" >&2 2>/dev/null || true
      return 1
    fi
    if [ $SECONDS -ge $deadline ]; then
      log "$what not ready after $seconds s; the end of its log:"
      tail -20 "$dir/$what.log" >&2 2>/dev/null || true
      return 1
    fi
    sleep 0.2
  done
}

api_ready() {
  # shellcheck disable=SC1091
  . "$dir/cluster.env"
  curl -sf --cacert "$dir/pki/ca.crt" -H "Authorization: Bearer $ADMIN_TOKEN" "https://127.0.0.1:$API_PORT/readyz"
}
etcd_ready() {
  # shellcheck disable=SC1091
  . "$dir/cluster.env"
  curl -sf "http://127.0.0.1:$ETCD_PORT/health"
}
default_sa() {
  # shellcheck disable=SC1091
  . "$dir/cluster.env"
  curl -sf --cacert "$dir/pki/ca.crt" -H "Authorization: Bearer $ADMIN_TOKEN" \
    "https://127.0.0.1:$API_PORT/api/v1/namespaces/default/serviceaccounts/default"
}

wait_ready() {
  case "$1" in
    etcd) wait_for etcd 30 etcd_ready ;;
    kube-apiserver) wait_for kube-apiserver 120 api_ready ;;
    *) sleep 0.5; kill -0 "$(pid_of "$1")" 2>/dev/null || { log "$1 exited; the end of its log:"; tail -20 "$dir/$1.log" >&2; return 1; } ;;
  esac
}

build() {
  local start=$SECONDS want=(etcd kube-apiserver kube-controller-manager)
  [ "$scheduler" = kube ] && want+=(kube-scheduler)
  if [ "${UPSTREAM_CLUSTER_BUILT:-}" = 1 ]; then  # a caller that has just built them (many ups in a row)
    for c in "${want[@]}"; do [ -x "$bin/$c" ] || { log "no $bin/$c (unset UPSTREAM_CLUSTER_BUILT)"; exit 2; }; done
    return 0
  fi
  command -v go > /dev/null || { log "go is not installed (want Go 1.26 at /usr/local/go)"; exit 2; }
  log "building ${want[*]} from upstream/'s module (cached builds take seconds)"
  (cd "$repo/upstream" && go build -o bin/etcd ./cmd/etcd)
  for c in "${want[@]:1}"; do
    (cd "$repo/upstream" && go build -o "bin/$c" "k8s.io/kubernetes/cmd/$c")
  done
  log "built in $((SECONDS - start)) s"
}

pki() {
  mkdir -p "$dir/pki"
  local p="$dir/pki"
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=upstream-cluster-ca" \
    -keyout "$p/ca.key" -out "$p/ca.crt" 2> /dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/CN=kube-apiserver" -keyout "$p/apiserver.key" -out "$p/apiserver.csr" 2> /dev/null
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,IP:10.96.0.1\n' > "$p/san.ext"
  openssl x509 -req -in "$p/apiserver.csr" -CA "$p/ca.crt" -CAkey "$p/ca.key" -CAcreateserial -days 2 \
    -extfile "$p/san.ext" -out "$p/apiserver.crt" 2> /dev/null
  openssl genrsa -out "$p/sa.key" 2048 2> /dev/null
  openssl rsa -in "$p/sa.key" -pubout -out "$p/sa.pub" 2> /dev/null
  chmod 600 "$p"/*.key
}

up() {
  if [ -s "$dir/pids" ]; then
    while read -r name pid; do
      if kill -0 "$pid" 2>/dev/null; then log "$name (pid $pid) still runs in $dir: run down first"; exit 1; fi
    done < "$dir/pids"
  fi
  [ -x "$arbiter" ] || { log "no arbiter binary at $arbiter (build it, or give --arbiter)"; exit 2; }
  arbiter="$(cd "$(dirname "$arbiter")" && pwd)/$(basename "$arbiter")"
  build
  if $build_only; then return 0; fi
  rm -rf "$dir/etcd" "$dir/pki" "$dir"/*.log "$dir/pids"
  chmod 700 "$dir"
  pki
  local token user_token
  token="$(openssl rand -hex 16)"
  user_token="$(openssl rand -hex 16)"
  # The admin, and a user of no group and no role (what RBAC denies, and how, is compared too).
  printf '%s,admin,admin-uid,"system:masters"\n%s,plain-user,plain-user-uid\n' "$token" "$user_token" > "$dir/tokens.csv"
  chmod 600 "$dir/tokens.csv"
  cat > "$dir/cluster.env" <<EOF
ETCD_PORT=$(free_port)
ETCD_PEER_PORT=$(free_port)
API_PORT=$(free_port)
ADMIN_TOKEN=$token
USER_TOKEN=$user_token
ARBITER=$arbiter
SCHEDULER=$scheduler
EOF
  # shellcheck disable=SC1091
  . "$dir/cluster.env"
  cat > "$dir/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: upstream
  cluster:
    server: https://127.0.0.1:$API_PORT
    certificate-authority-data: $(base64 -w0 < "$dir/pki/ca.crt")
users:
- name: admin
  user:
    token: $token
contexts:
- name: upstream
  context: {cluster: upstream, user: admin}
current-context: upstream
EOF
  chmod 600 "$dir/kubeconfig"
  local t0=$SECONDS
  for c in etcd kube-apiserver kube-controller-manager arbiter-nodes; do
    start "$c"
    wait_ready "$c"
  done
  if [ "$scheduler" = kube ]; then start kube-scheduler; wait_ready kube-scheduler; fi
  wait_for kube-controller-manager 60 default_sa
  log "up in $((SECONDS - t0)) s: https://127.0.0.1:$API_PORT (KUBECONFIG=$dir/kubeconfig), scheduler: $scheduler"
}

down() {
  [ -f "$dir/pids" ] || { log "nothing runs in $dir"; return 0; }
  # The kubelets and controllers first, the server, its store last.
  for c in kube-scheduler arbiter-nodes kube-controller-manager kube-apiserver etcd; do stop "$c"; done
  rm -f "$dir/pids"
  log "down"
}

restart() {
  [ -n "$component" ] || { log "restart which component?"; exit 2; }
  command_of "$component" > /dev/null
  [ -n "$(pid_of "$component")" ] || { log "$component does not run in $dir"; exit 1; }
  if $hard; then stop "$component" KILL; else stop "$component"; fi
  start "$component"
  wait_ready "$component"
}

case "$action" in
  up) up ;;
  down) down ;;
  restart) restart ;;
  stop)
    [ -n "$component" ] || { log "stop which component?"; exit 2; }
    command_of "$component" > /dev/null
    stop "$component" ;;
  env) cat "$dir/cluster.env" ;;
  *) log "unknown action $action (up, down, restart, stop, env)"; exit 2 ;;
esac
