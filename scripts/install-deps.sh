#!/usr/bin/env bash
# Installs the Debian packages Arbiter builds and tests with. Runs apt-get as root (through
# sudo when needed). Safe to run again.
set -euo pipefail
packages=(
  cmake make g++ pkg-config
  libyaml-cpp-dev nlohmann-json3-dev libcli11-dev libcpp-httplib-dev libsqlite3-dev
  python3-kubernetes etcd-server etcd-client
  libgtest-dev libgmock-dev libbenchmark-dev
  clang libclang-rt-14-dev
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages are installed"
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
