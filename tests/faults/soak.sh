#!/usr/bin/env bash
# The long soak (issue 14): soak for SECONDS (default 3600) at P ranks
# (default 3), threads x communicators as given; prints the collectives
# checked and resident memory after the first round and at the end.
#   tests/faults/soak.sh [SECONDS] [P] [soak options...]
set -euo pipefail
source "$(dirname "$0")/../../scripts/setup.sh"
cd "$EB_ROOT"
eb_deps
eb_mpi_env
eb_build build --target soak
seconds="${1:-3600}" ranks="${2:-3}"
shift $(( $# > 2 ? 2 : $# ))
exec mpirun --oversubscribe -n "$ranks" build/tests/faults/soak --seconds "$seconds" "$@"
