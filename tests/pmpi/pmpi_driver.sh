#!/usr/bin/env bash
# Driver of the PMPI tier (tests/pmpi/CMakeLists.txt): runs unmodified MPI
# programs under mpirun with and without libearlybird_mpi.so preloaded. Every
# run is bounded by `timeout`.
#   pmpi_driver.sh compare PROGRAM LIBRARY P  same digests both ways, and the
#                                             verbose log shows earlybird ran
#                                             every intercepted call (and what passed through)
#   pmpi_driver.sh errors  PROGRAM LIBRARY P  error handlers, thread level
#   pmpi_driver.sh env     PROGRAM LIBRARY P  the environment picks algorithms
# EB_MPIRUN replaces mpirun (the multihost tier: scripts/cluster.sh mpirun).
set -uo pipefail
mode=$1 program=$2 library=$3 ranks=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1

fail() {
  echo "FAIL ($mode, P=$ranks): $*" >&2
  for f in "$work"/*.err; do [ -s "$f" ] && { echo "--- $(basename "$f")"; tail -20 "$f"; } >&2; done
  exit 1
}

# run NAME [VAR=VALUE...] -- [ARGS...]: one mpirun; output in $work/NAME.out, .err
run() {
  local name=$1 exports=()
  shift
  while [ "$1" != "--" ]; do exports+=(-x "$1"); shift; done
  shift
  timeout 150 ${EB_MPIRUN:-mpirun} -np "$ranks" --oversubscribe "${exports[@]}" "$program" "$@" >"$work/$name.out" 2>"$work/$name.err"
}

# Small calls go to earlybird too, so every code path runs.
preload=(LD_PRELOAD="$library" EARLYBIRD_MIN_BYTES=0)

logged() {  # NAME PATTERN: the verbose log of run NAME has a line matching PATTERN
  grep -qE "^earlybird: $2" "$work/$1.err"
}

compare() {
  run plain -- || fail "the program failed without the library"
  run earlybird "${preload[@]}" EARLYBIRD_VERBOSE=1 -- || fail "the program failed with the library"
  [ -s "$work/plain.out" ] || fail "no digests printed"
  diff -u "$work/plain.out" "$work/earlybird.out" >&2 || fail "results differ with the library"
  for call in MPI_Allreduce MPI_Iallreduce MPI_Reduce MPI_Bcast MPI_Allgather MPI_Reduce_scatter_block; do
    logged earlybird "$call P=$ranks .*: earlybird [a-z_]+$" || fail "$call never went to earlybird"
  done
  logged earlybird "MPI_Allreduce .*passes through \(operator is not" || fail "user operator did not pass through"
  logged earlybird "MPI_Bcast .*passes through \(derived" || fail "derived datatype did not pass through"
  if [ "$ranks" -ge 2 ]; then
    logged earlybird "MPI_Allreduce .*passes through \(inter-communicator\)" || fail "inter-communicator did not pass through"
  fi
  echo "compare P=$ranks: $(wc -l <"$work/plain.out") digests identical with and without the library"
}

errors() {
  run level -- level || fail "thread level without the library"
  run level_eb "${preload[@]}" -- level || fail "thread level with the library"
  run return "${preload[@]}" -- return || fail "MPI_ERRORS_RETURN"
  run fatal "${preload[@]}" -- fatal
  local status=$?
  [ "$status" -ne 0 ] && [ "$status" -ne 124 ] || fail "MPI_ERRORS_ARE_FATAL: exit status $status, expected an abort"
  grep -q "^earlybird: MPI_Allreduce: earlybird allreduce(.*) on rank [0-9]* of $ranks: input and output overlap" \
    "$work/fatal.err" || fail "MPI_ERRORS_ARE_FATAL: no one-line message naming call, rank and cause"
  echo "errors P=$ranks: thread level, MPI_ERRORS_RETURN and MPI_ERRORS_ARE_FATAL as expected"
}

env_variables() {
  run ring "${preload[@]}" EARLYBIRD_VERBOSE=1 EARLYBIRD_ALLREDUCE=ring EARLYBIRD_BCAST=chain -- quick ||
    fail "EARLYBIRD_ALLREDUCE=ring"
  logged ring "MPI_Allreduce P=$ranks .*: earlybird ring$" || fail "EARLYBIRD_ALLREDUCE=ring did not run ring"
  logged ring "MPI_Bcast P=$ranks .*: earlybird chain$" || fail "EARLYBIRD_BCAST=chain did not run chain"
  run doubling "${preload[@]}" EARLYBIRD_VERBOSE=1 EARLYBIRD_ALLREDUCE=recursive_doubling EARLYBIRD_BCAST=binomial \
    EARLYBIRD_SEGMENT_BYTES=4096 -- quick || fail "EARLYBIRD_ALLREDUCE=recursive_doubling"
  logged doubling "MPI_Allreduce P=$ranks .*: earlybird recursive_doubling$" || fail "recursive_doubling not run"
  logged doubling "MPI_Bcast P=$ranks .*: earlybird binomial$" || fail "EARLYBIRD_BCAST=binomial not run"
  run defaults LD_PRELOAD="$library" EARLYBIRD_VERBOSE=1 -- quick || fail "default configuration"
  logged defaults "MPI_Allreduce P=$ranks bytes \[2\^11, .*passes through \(below EARLYBIRD_MIN_BYTES\)" ||
    fail "a 4000-byte allreduce did not pass through by default"
  logged defaults "MPI_Allreduce P=$ranks bytes \[2\^19, .*: earlybird " || fail "an 800 KB allreduce did not use earlybird"
  run disabled "${preload[@]}" EARLYBIRD_VERBOSE=1 EARLYBIRD_DISABLE=1 -- quick || fail "EARLYBIRD_DISABLE=1"
  ! grep -q "^earlybird: " "$work/disabled.err" || fail "EARLYBIRD_DISABLE=1 still logged earlybird decisions"
  for name in doubling defaults disabled; do
    diff -q "$work/ring.out" "$work/$name.out" >/dev/null || fail "results of run $name differ from run ring"
  done
  run bogus "${preload[@]}" EARLYBIRD_ALLREDUCE=bogus -- quick
  local status=$?
  [ "$status" -ne 0 ] && [ "$status" -ne 124 ] || fail "EARLYBIRD_ALLREDUCE=bogus: exit status $status"
  grep -q "^earlybird: MPI_Init: EARLYBIRD_ALLREDUCE=bogus names no allreduce algorithm; known: auto, " \
    "$work/bogus.err" || fail "EARLYBIRD_ALLREDUCE=bogus: no clear message at MPI_Init"
  echo "env P=$ranks: algorithm, segment, threshold, disable and bad-name variables behave as documented"
}

case "$mode" in
  compare) compare ;;
  errors) errors ;;
  env) env_variables ;;
  *) echo "usage: $0 compare|errors|env PROGRAM LIBRARY P" >&2; exit 2 ;;
esac
