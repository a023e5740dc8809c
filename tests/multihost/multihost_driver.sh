#!/usr/bin/env bash
# Driver of the multihost tier (tests/multihost/CMakeLists.txt): runs a test
# across emulated hosts (scripts/cluster.sh), bringing the testbed up in the
# shape asked for unless it already has it.
#   multihost_driver.sh HOSTS SLOTS mpi PROGRAM     PROGRAM on HOSTS x SLOTS ranks
#   multihost_driver.sh HOSTS SLOTS pmpi ARGS...    tests/pmpi/pmpi_driver.sh ARGS
#                                                   with mpirun across the hosts
# Exits 77 (ctest: skipped) with one SKIPPED line when the testbed cannot be
# built here (not root, no network namespaces).
set -uo pipefail
hosts=$1 slots=$2 kind=$3
shift 3
here="$(cd "$(dirname "$0")" && pwd)"
cluster="$here/../../scripts/cluster.sh"

if ! why="$("$cluster" check)"; then
  echo "SKIPPED multihost test: $why"
  exit 77
fi
status="$("$cluster" status 2>/dev/null | head -1)"
if [ "$status" != "cluster.sh: $hosts hosts, $slots slots each, link unlimited" ]; then
  "$cluster" up "$hosts" --slots "$slots" >/dev/null || exit 1
fi
ranks=$((hosts * slots))
export EB_MPIRUN="$cluster mpirun"
case "$kind" in
  mpi) timeout 240 "$cluster" mpirun -x EARLYBIRD_TRANSPORT -x EARLYBIRD_TIMEOUT_MS -np "$ranks" "$@" ;;
  pmpi) bash "$here/../pmpi/pmpi_driver.sh" "$@" "$ranks" ;;
  *) echo "multihost_driver.sh: unknown kind $kind" >&2; exit 2 ;;
esac
