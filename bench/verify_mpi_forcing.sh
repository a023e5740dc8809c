#!/usr/bin/env bash
# Shows that `eb-bench sweep --mpi-algorithms N` really makes Open MPI run
# coll_tuned algorithm N: rank 0 runs under gdb with a breakpoint on every
# ompi_coll_base_<collective>_intra_* function of libmpi, and each function hit
# is counted. One run per forced algorithm, MPI only (--algorithms none), one
# size, 8 calls per contender (2 warm-up, 1 probe, 5 timed). The default
# choice (mpi:default) runs in every run too, so its function shows each time;
# the forced algorithm's function must show beside it, 8 more times. For
# allreduce, eb-bench's own bookkeeping (MPI_Allreduce of times and flags on
# MPI_COMM_WORLD) adds a few calls of the small-message default.
# Usage: bench/verify_mpi_forcing.sh [P] [collective] [size] [build dir]
set -euo pipefail
ranks="${1:-4}"
collective="${2:-allreduce}"
size="${3:-64K}"
build="${4:-build}"
bench="$build/bench/eb-bench"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

command -v gdb >/dev/null || { echo "needs gdb (apt-get install gdb)" >&2; exit 1; }
[ -x "$bench" ] || { echo "no $bench: build eb-bench first" >&2; exit 1; }
mpi_name="$collective"
[ "$collective" = reduce_scatter ] && mpi_name=reduce_scatter_block
tuned_variable="coll_tuned_${mpi_name}_algorithm"
libmpi="$(ldd "$bench" | awk '/libmpi\.so/ {print $3}')"
functions=$(nm -D --defined-only "$libmpi" | awk '{print $3}' |
  grep -E "^ompi_coll_base_${mpi_name}_(intra_|basic_linear)")

gdb_script="$(mktemp)"
trap 'rm -f "$gdb_script"' EXIT
{
  echo "set breakpoint pending on"
  echo "set pagination off"
  for f in $functions; do
    echo "break $f"
    echo "commands"
    echo "silent"
    echo "printf \"HIT $f\\n\""
    echo "continue"
    echo "end"
  done
  echo "run"
} > "$gdb_script"

# Runs one MPI-only sweep with rank 0 under gdb; prints "count function" lines.
hits() {
  mpirun -np "$ranks" --oversubscribe sh -c '
    if [ "$OMPI_COMM_WORLD_RANK" = 0 ]; then exec gdb -batch -x "$0" --args "$@"; else exec "$@"; fi' \
    "$gdb_script" "$bench" sweep --collective "$collective" --sizes "$size" --budget 0 --algorithms none "$@" \
    2>/dev/null | awk '/^HIT / {print $2}' | sort | uniq -c | sed 's/^/    /'
}

echo "# $collective, P = $ranks, $size per rank; functions rank 0 entered (count per function)"
echo "default choice only:"
hits
algorithms=$(ompi_info --param coll tuned --level 9 --parsable 2>/dev/null |
  awk -F: -v v="$tuned_variable" '$0 ~ "mca:coll:tuned:param:"v":enumerator:value:" {print $8}')
for n in $algorithms; do
  [ "$n" = 0 ] && continue
  echo "forced $tuned_variable=$n:"
  hits --mpi-algorithms "$n"
done
