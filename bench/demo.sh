#!/usr/bin/env bash
# The main job: installs what is missing, builds, and runs earlybird's
# allreduce algorithms against MPI_Allreduce at P = 4 for several sizes,
# checking every result and printing the ratio table.
# Usage: bench/demo.sh [P] [extra eb-bench sweep options]
set -euo pipefail
source "$(dirname "$0")/../scripts/setup.sh"
cd "$EB_ROOT"
eb_deps
eb_build build
eb_mpi_env
ranks="${1:-4}"
shift || true
mpirun -np "$ranks" --oversubscribe build/bench/eb-bench sweep \
  --algorithms all --sizes 8,1K,64K,1M,4M --budget 0.25 "$@"
