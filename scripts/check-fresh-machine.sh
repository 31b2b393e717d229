#!/usr/bin/env bash
# Proves that the README's two commands work on a fresh Debian 12 (bookworm) machine: a minimal
# root made with debootstrap, holding nothing but this checkout, runs
#   1. the first command (install, build, `arbiter serve`): the server must come up, write its
#      kubeconfig and answer kubectl from inside the root;
#   2. the second command (install, build, every test).
# Any header, library or tool that the build, the server or the tests take from a package
# scripts/install-deps.sh does not install makes this fail.
#
# Needs root and debootstrap (`apt-get install debootstrap`); the pristine debootstrap root is
# cached as a tarball under ARBITER_FRESH_CACHE (default /var/cache/arbiter-fresh) and unpacked
# anew for every run. Port 8080 must be free (the first command serves on it).
# With ARBITER_FRESH_EXPORT=DIR, the fresh root's build/bin (the arbiter binary the README's
# commands built) is copied to DIR/bin before the root is removed.
# Each phase prints its wall time.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$(pwd)"
cache="${ARBITER_FRESH_CACHE:-/var/cache/arbiter-fresh}"
mirror="${ARBITER_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
[ "$(id -u)" -eq 0 ] || { echo "check-fresh-machine: run as root (debootstrap and chroot)" >&2; exit 2; }
command -v debootstrap >/dev/null || { echo "check-fresh-machine: debootstrap is not installed" >&2; exit 2; }
if (exec 3<>/dev/tcp/127.0.0.1/8080) 2>/dev/null; then
  echo "check-fresh-machine: port 8080 is in use; the README's first command serves on it" >&2
  exit 2
fi

phase_start=$SECONDS
phase_done() { echo "== check-fresh-machine: $1 took $((SECONDS - phase_start)) s =="; phase_start=$SECONDS; }

mkdir -p "$cache"
base="$cache/bookworm-minbase.tar"
if [ ! -s "$base" ]; then
  echo "== debootstrap: a minimal Debian 12 root (cached in $base) =="
  staging="$(mktemp -d "$cache/staging.XXXXXX")"
  debootstrap --variant=minbase bookworm "$staging" "$mirror"
  tar -C "$staging" -cf "$base.tmp" .
  mv "$base.tmp" "$base"
  rm -rf "$staging"
  phase_done "debootstrap"
fi

root="$(mktemp -d /var/tmp/arbiter-fresh.XXXXXX)"
mounted=()
cleanup() {
  # Stop whatever the first command left running, then unmount in reverse order.
  if [ -n "${serve_pid:-}" ]; then kill "$serve_pid" 2>/dev/null || true; fi
  for p in $(ls /proc | grep -E '^[0-9]+$'); do
    if [ "$(readlink "/proc/$p/root" 2>/dev/null)" = "$root" ]; then kill -9 "$p" 2>/dev/null || true; fi
  done
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[$i]}" 2>/dev/null || true; done
  [ "${ARBITER_FRESH_KEEP:-0}" = "1" ] || rm -rf --one-file-system "$root"
}
trap cleanup EXIT
tar -C "$root" -xf "$base"
mount -t proc proc "$root/proc" && mounted+=("$root/proc")
mount --rbind /sys "$root/sys" && mounted+=("$root/sys")
mount --rbind /dev "$root/dev" && mounted+=("$root/dev")
mount -t tmpfs tmpfs "$root/tmp" && mounted+=("$root/tmp")
cp /etc/resolv.conf "$root/etc/resolv.conf"
# The network's own trust: where this machine reaches the package registries through a proxy
# whose certificate authority it trusts (/usr/local/share/ca-certificates), the root trusts it
# too, as any machine on that network must (ca-certificates adds it to the system bundle when
# install-deps.sh installs it; Node.js reads that bundle through NODE_EXTRA_CA_CERTS). Nothing of
# Arbiter's is copied.
extra_ca_env=()
if ls /usr/local/share/ca-certificates/*.crt >/dev/null 2>&1; then
  mkdir -p "$root/usr/local/share/ca-certificates"
  cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
  extra_ca_env=(NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt)
fi

# The checkout as git sees it (tracked and new files, not build trees or ignored files).
mkdir -p "$root/src/arbiter"
git -C "$repo" ls-files -z --cached --others --exclude-standard | xargs -0 -I{} sh -c '[ -e "{}" ] && echo "{}"' |
  tar -C "$repo" -cf - -T - | tar -C "$root/src/arbiter" -xf -

# The README's two commands, exactly as written: the first two ```sh blocks.
readme_commands="$(awk '/^```sh$/{inside=1; next} /^```$/{if (inside) {n++; inside=0}; next} inside && n < 2 {print n+0 ": " $0}' README.md)"
first="$(printf '%s\n' "$readme_commands" | sed -n 's/^0: //p')"
second="$(printf '%s\n' "$readme_commands" | sed -n 's/^1: //p')"
[ -n "$first" ] && [ -n "$second" ] || { echo "check-fresh-machine: README.md has no two \`\`\`sh commands" >&2; exit 1; }
run_in_root() { chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  LANG=C.UTF-8 "${extra_ca_env[@]}" bash -c "cd /src/arbiter && $1"; }

echo "== README command 1 on a fresh root: $first =="
log="$root/tmp/first-command.log"
run_in_root "$first" >"$log" 2>&1 &
serve_pid=$!
deadline=$((SECONDS + ${ARBITER_FRESH_TIMEOUT:-3600}))
until grep -q '"Serving"' "$log" 2>/dev/null; do
  if ! kill -0 "$serve_pid" 2>/dev/null; then
    tail -40 "$log"; echo "check-fresh-machine: the first command exited before serving" >&2; exit 1
  fi
  [ $SECONDS -lt $deadline ] || { tail -40 "$log"; echo "check-fresh-machine: no server after the timeout" >&2; exit 1; }
  sleep 5
done
phase_done "README command 1 until the server serves (install, build, start)"
echo "the server is up; kubectl inside the root, with the kubeconfig the server wrote:"
run_in_root 'KUBECONFIG=arbiter-data/kubeconfig kubectl get priorityclasses && KUBECONFIG=arbiter-data/kubeconfig kubectl get namespaces' ||
  { tail -40 "$log"; echo "check-fresh-machine: kubectl could not use the server" >&2; exit 1; }
kill -TERM "$serve_pid" 2>/dev/null || true
pkill -TERM -f "^build/bin/arbiter serve" 2>/dev/null || true
for p in $(ls /proc | grep -E '^[0-9]+$'); do
  if [ "$(readlink "/proc/$p/root" 2>/dev/null)" = "$root" ]; then kill -TERM "$p" 2>/dev/null || true; fi
done
wait "$serve_pid" 2>/dev/null || true
serve_pid=""

phase_done "kubectl against the server, and its stop"

echo "== README command 2 on the same root: $second =="
run_in_root "$second"
phase_done "README command 2 (install, build, every test)"
if [ -n "${ARBITER_FRESH_EXPORT:-}" ]; then
  mkdir -p "$ARBITER_FRESH_EXPORT"
  rm -rf "$ARBITER_FRESH_EXPORT/bin"
  cp -a "$root/src/arbiter/build/bin" "$ARBITER_FRESH_EXPORT/bin"
  echo "check-fresh-machine: the fresh root's build/bin is in $ARBITER_FRESH_EXPORT/bin"
fi
echo "check-fresh-machine: both README commands pass on a fresh Debian 12 root"
