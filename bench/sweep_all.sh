#!/usr/bin/env bash
# A full sweep: every collective, every earlybird algorithm and every Open MPI
# coll_tuned algorithm forced, at each P given, 8 B to 16 MiB; then the plots.
# Writes OUTDIR/sweep-<collective>-P<P>.csv, the printed tables as .txt, and
# the PNGs (when matplotlib is installed).
# Usage: bench/sweep_all.sh OUTDIR P [P ...]
#   environment: EB_BUILD (build), EB_SIZES (8:16M), EB_BUDGET (0.3 s per
#   algorithm and size), EB_COLLECTIVES (all five); EARLYBIRD_* variables set
#   apply to every collective (each table's header lists them)
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 OUTDIR P [P ...]" >&2; exit 2; }
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$1"
shift
bench="${EB_BUILD:-$root/build}/bench/eb-bench"
collectives="${EB_COLLECTIVES:-allreduce reduce bcast allgather reduce_scatter}"
[ -x "$bench" ] || { echo "no $bench: cmake --build build --target eb-bench first" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$out"

status=0
for ranks in "$@"; do
  for collective in $collectives; do
    name="$out/sweep-$collective-P$ranks"
    echo "== $collective, P = $ranks -> $name.csv" >&2
    mpirun -np "$ranks" --oversubscribe "$bench" sweep \
      --collective "$collective" --algorithms all --mpi-algorithms all \
      --sizes "${EB_SIZES:-8:16M}" --budget "${EB_BUDGET:-0.3}" --csv "$name.csv" |
      tee "$name.txt" || status=$?
  done
done
python3 "$root/bench/plot.py" "$out"/sweep-*.csv --out "$out" || echo "(no plots drawn)" >&2
exit "$status"
