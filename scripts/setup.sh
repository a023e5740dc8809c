#!/usr/bin/env bash
# Shared set-up for bench/demo.sh and tests/run.sh: installs the Debian
# packages earlybird needs when any is missing (idempotent, non-interactive,
# quick when everything is present), and configures + builds a tree.
#
#   scripts/setup.sh deps                      install what is missing
#   scripts/setup.sh build DIR [CMAKE ARGS...] configure and build DIR
# Sourcing it defines eb_deps, eb_build and eb_mpi_env for the caller.
set -euo pipefail

EB_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
EB_PACKAGES=(build-essential cmake pkg-config libopenmpi-dev openmpi-bin libtbb-dev libhwloc-dev doctest-dev libcli11-dev iproute2 util-linux)

eb_deps() {
  local missing=()
  for pkg in "${EB_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "earlybird set-up: installing ${missing[*]}" >&2
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# eb_build DIR [CMAKE -D ARGS...] [--target T...]
eb_build() {
  local dir="$1"
  shift
  local configure=() build=()
  while [ $# -gt 0 ]; do
    case "$1" in
      --target) build+=(--target "$2"); shift 2 ;;
      *) configure+=("$1"); shift ;;
    esac
  done
  cmake -S "$EB_ROOT" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${configure[@]}" >/dev/null
  cmake --build "$dir" -j "$(nproc)" "${build[@]}"
}

# mpirun as root needs explicit consent; 2-core machines need oversubscription.
eb_mpi_env() {
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export OMPI_MCA_rmaps_base_oversubscribe=1
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  case "${1:-}" in
    deps) eb_deps ;;
    build) shift; eb_deps; eb_build "$@" ;;
    *) echo "usage: $0 deps | build DIR [CMAKE ARGS...]" >&2; exit 2 ;;
  esac
fi
