#!/usr/bin/env bash
# Installs every Debian package Arbiter builds, runs and tests with, on a fresh Debian 12
# (bookworm). Runs apt-get as root (through sudo when needed). Safe to run again.
# scripts/check-fresh-machine.sh proves the list complete on a debootstrap root.
set -euo pipefail
packages=(
  # build
  cmake make g++ pkg-config
  mold  # the linker (cmake/ArbiterHelpers.cmake): incremental builds are mostly links
  libyaml-cpp-dev nlohmann-json3-dev libsimdjson-dev libcli11-dev libfmt-dev libcpp-httplib-dev libsqlite3-dev
  libprotobuf-dev protobuf-compiler libboost1.81-dev libssl-dev zlib1g-dev
  libzstd-dev  # zstd: the stored versions' text, compressed once cold (store/body.h)
  libjemalloc-dev  # jemalloc, the arbiter executable's allocator (and jeprof, for scripts/memory-profile.sh)
  # tests: GoogleTest, Google Benchmark, the libFuzzer run and sanitizers
  libgtest-dev libgmock-dev libbenchmark-dev clang libclang-rt-14-dev
  # end-to-end tests: the Python client, etcd, and the tools they drive
  python3 python3-kubernetes etcd-server etcd-client ca-certificates
  # the dashboard's browser tests: Debian's Chromium (headless, driven by playwright-core from
  # npm) and a font for its text
  chromium fonts-dejavu-core
)
# Node.js and npm run the browser tests: Debian's where none is on PATH (a Node.js installed
# another way, which brings its own npm, is used as it is; Debian's npm would conflict with it).
command -v node >/dev/null 2>&1 || packages+=(nodejs)
command -v npm >/dev/null 2>&1 || packages+=(npm)
# The end-to-end tests drive the stock kubectl: Debian's kubernetes-client where none is on PATH
# (a newer kubectl installed another way is used as it is).
command -v kubectl >/dev/null 2>&1 || packages+=(kubernetes-client)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages are installed"
else
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# The browser tests' npm packages, exactly as tests/browser/package-lock.json pins them (again
# only when the lock file changed since the last install).
browser="$(dirname "$0")/../tests/browser"
if ! cmp -s "$browser/package-lock.json" "$browser/node_modules/.installed-lock.json" 2>/dev/null; then
  echo "install-deps: npm ci in tests/browser"
  (cd "$browser" && npm ci --no-audit --no-fund --loglevel=error && cp package-lock.json node_modules/.installed-lock.json)
fi
