#!/usr/bin/env bash
# One command per example, on a fresh Debian machine as on this one:
# installs what is missing, builds earlybird and installs it into
# build/prefix, builds examples/ against that install (as an application
# would: find_package(earlybird)), and runs the example under mpirun.
#
#   examples/run.sh cg  [P] [eb-cg options]    default P = 2 (examples/cg/main.cpp lists the options)
#   examples/run.sh sgd [P] [eb-sgd options]   (examples/sgd/main.cpp)
set -euo pipefail
source "$(dirname "$0")/../scripts/setup.sh"
cd "$EB_ROOT"
case "${1:-}" in
  cg | sgd) example="eb-$1" ;;
  *) echo "usage: examples/run.sh cg|sgd [P] [options]" >&2; exit 2 ;;
esac
shift
ranks=2
if [[ "${1:-}" =~ ^[0-9]+$ ]]; then ranks="$1"; shift; fi

eb_deps
eb_mpi_env
eb_build build --target earlybird --target earlybird_mpi --target eb-bench
cmake --install build --prefix "$EB_ROOT/build/prefix" >/dev/null
cmake -S examples -B build-examples -DCMAKE_PREFIX_PATH="$EB_ROOT/build/prefix" >/dev/null
cmake --build build-examples -j "$(nproc)" --target "$example" >/dev/null
exec mpirun --oversubscribe -n "$ranks" "build-examples/$example" "$@"
