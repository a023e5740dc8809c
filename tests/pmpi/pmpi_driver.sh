#!/usr/bin/env bash
# Driver of the PMPI tier (tests/pmpi/CMakeLists.txt): runs unmodified MPI
# programs under mpirun with and without libearlybird_mpi.so preloaded. Every
# run is bounded by `timeout`.
#   pmpi_driver.sh compare PROGRAM LIBRARY P  same digests both ways, and the
#                                             verbose log shows earlybird ran
#                                             every intercepted call (and what passed through)
#   pmpi_driver.sh errors  PROGRAM LIBRARY P  error handlers, thread level
#   pmpi_driver.sh env     PROGRAM LIBRARY P  the environment picks algorithms
#   pmpi_driver.sh shared  PROGRAM LIBRARY P  EARLYBIRD_SHARED_BUFFERS=1 with buffers from
#                                             MPI_Alloc_mem: same digests, every collective on peer_reads
#   pmpi_driver.sh fuzz    PROGRAM LIBRARY P  hostile calls: same outcomes (EB_FUZZ_CASES, default 300)
#   pmpi_driver.sh fuzz-mismatch PROGRAM LIBRARY P  calls that differ on one rank, with the
#                                             library only: every rank reports (EB_FUZZ_CASES, default 40)
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
  timeout "${run_limit:-150}" ${EB_MPIRUN:-mpirun} -np "$ranks" --oversubscribe "${exports[@]}" "$program" "$@" >"$work/$name.out" 2>"$work/$name.err"
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

# Hostile calls (pmpi_fuzz.c) with and without the library, case by case:
# a call MPI completes on every rank must give the same digests with the
# library (overlapping buffers excepted: erroneous, earlybird may refuse);
# a rank MPI reports an error on must get an error with the library too.
# Every case must reach every rank in both runs (no crash, no hang).
# fuzz_run NAME [VAR=VALUE...] -- ARGS: pmpi_fuzz writing one file per rank,
# gathered into $work/NAME.out.
fuzz_run() {
  local name=$1
  shift
  mkdir -p "$work/$name.ranks"
  run "$name" EB_FUZZ_OUTPUT="$work/$name.ranks" "$@" || return 1
  cat "$work/$name.ranks"/rank-*.out >"$work/$name.out"
}

fuzz() {
  local cases=${EB_FUZZ_CASES:-300}
  local run_limit=$((150 + cases / 5))  # ~25 cases/s at P = 3 on 2 cores
  fuzz_run plain -- "$cases" 1 || fail "pmpi_fuzz failed without the library"
  fuzz_run earlybird "${preload[@]}" EARLYBIRD_TIMEOUT_MS=3000 -- "$cases" 1 || fail "pmpi_fuzz failed with the library"
  sort -n -k1,1 -k2,2 "$work/plain.out" | cut -d'#' -f1 >"$work/plain.sorted"
  sort -n -k1,1 -k2,2 "$work/earlybird.out" | cut -d'#' -f1 >"$work/earlybird.sorted"
  [ "$(wc -l <"$work/plain.sorted")" -eq $((cases * ranks)) ] || fail "a case is missing without the library"
  [ "$(wc -l <"$work/earlybird.sorted")" -eq $((cases * ranks)) ] || fail "a case is missing with the library"
  local verdict
  verdict="$(paste -d' ' "$work/plain.sorted" "$work/earlybird.sorted" | awk -v ranks="$ranks" '
    # fields: seed rank kind outcome value | seed rank kind outcome value
    { seed = $1; mpi_ok[seed] += ($4 == "ok"); kind[seed] = $3
      line[seed, $2] = $0; n[seed]++ }
    END {
      bad = 0
      for (s in n) for (r = 0; r < ranks; ++r) {
        split(line[s, r], f, " ")
        if (mpi_ok[s] == ranks && kind[s] != "overlap" && (f[9] != "ok" || f[10] != f[5])) { print "differs: " line[s, r]; bad++ }
        if (f[4] == "error" && f[9] != "error") { print "error lost: " line[s, r]; bad++ }
        if (f[4] == "error" && f[9] == "error") { both++; same += (f[5] == f[10]) }
        if (mpi_ok[s] == ranks && kind[s] != "overlap") identical++
      }
      printf "summary %d rank calls identical, %d errors on both (%d of the same class)\n", identical, both, same
      exit bad > 0 }')" || fail "outcomes differ: $(grep -v summary <<<"$verdict" | head -5)"
  echo "fuzz P=$ranks: $cases hostile cases, every rank: $(grep summary <<<"$verdict" | cut -d' ' -f2-)"
}

# Calls that differ on the last rank (count, operator or root), with the
# library only (Open MPI itself hangs on them): every case must reach every
# rank, as an error or a completion, within the watchdog's timeout.
fuzz_mismatch() {
  local cases=${EB_FUZZ_CASES:-40}
  local run_limit=$((150 + cases))  # up to the 0.5 s timeout per case
  fuzz_run earlybird "${preload[@]}" EARLYBIRD_TIMEOUT_MS=500 -- "$cases" 1 mismatch ||
    fail "pmpi_fuzz mismatch failed with the library"
  [ "$(wc -l <"$work/earlybird.out")" -eq $((cases * ranks)) ] || fail "a mismatched case did not reach every rank"
  echo "fuzz-mismatch P=$ranks: $cases mismatched cases, every rank reported:" \
    "$(grep -c ' ok ' "$work/earlybird.out") completions, $(grep -c ' error ' "$work/earlybird.out") errors"
}

# EARLYBIRD_SHARED_BUFFERS=1: MPI_Alloc_mem's memory is earlybird's arena,
# which node peers load from; every collective named peer_reads, so each
# reads its peers' MPI_Alloc_mem buffers.
shared_buffers() {
  run plain -- alloc_mem || fail "the program failed without the library"
  local algorithms=() collective
  for collective in ALLREDUCE REDUCE BCAST ALLGATHER REDUCE_SCATTER; do algorithms+=("EARLYBIRD_$collective=peer_reads"); done
  run earlybird "${preload[@]}" EARLYBIRD_VERBOSE=1 EARLYBIRD_SHARED_BUFFERS=1 "${algorithms[@]}" -- alloc_mem ||
    fail "the program failed with the library"
  diff -u "$work/plain.out" "$work/earlybird.out" >&2 || fail "results differ with the library"
  if [ "$ranks" -ge 2 ]; then
    for call in MPI_Allreduce MPI_Reduce MPI_Bcast MPI_Allgather MPI_Reduce_scatter_block; do
      logged earlybird "$call P=$ranks .*: earlybird peer_reads$" || fail "$call never ran peer_reads"
    done
  fi
  echo "shared P=$ranks: $(wc -l <"$work/plain.out") digests identical, buffers from MPI_Alloc_mem"
}

case "$mode" in
  compare) compare ;;
  shared) shared_buffers ;;
  errors) errors ;;
  env) env_variables ;;
  fuzz) fuzz ;;
  fuzz-mismatch) fuzz_mismatch ;;
  *) echo "usage: $0 compare|errors|env|shared|fuzz|fuzz-mismatch PROGRAM LIBRARY P" >&2; exit 2 ;;
esac
