#!/usr/bin/env bash
# Faults tier, across emulated hosts (scripts/cluster.sh, root only): a link
# cut while collectives run (link_cut.cpp, 2 hosts x 1 rank, p2p transport).
#   short: host 1's link down for 2 s (under the 10 s timeout), then up:
#          the job finishes, no error, every result exact;
#   long:  down for 6 s (over the 2 s timeout), then up: the job ends (an
#          earlybird error naming the cause, or MPI/mpirun ending it) within
#          the run time + timeout + 15 s, with no wrong result.
#   link_cut.sh PROGRAM
set -uo pipefail
program="$1"
here="$(cd "$(dirname "$0")" && pwd)"
cluster="$here/../../scripts/cluster.sh"
if ! why="$("$cluster" check)"; then
  echo "SKIPPED link-cut test: $why"
  exit 77
fi
"$cluster" up 2 --slots 1 >/dev/null || exit 1
trap '"$cluster" exec 1 true >/dev/null 2>&1; ip -n eb-h1 link set veth1 up 2>/dev/null' EXIT

# run SECONDS TIMEOUT_MS CUT_AT CUT_FOR: sets lines (the program's report),
# status and took.
run() {
  local out=/tmp/link_cut.$$
  local start=$(date +%s)
  EARLYBIRD_TIMEOUT_MS=$2 timeout 120 "$cluster" mpirun -x EARLYBIRD_TIMEOUT_MS -np 2 "$program" --seconds "$1" >"$out" 2>&1 &
  local job=$!
  sleep "$3"
  ip -n eb-h1 link set veth1 down
  sleep "$4"
  ip -n eb-h1 link set veth1 up
  wait $job
  status=$?
  took=$(( $(date +%s) - start ))
  lines="$(grep -E "link_cut rank|WRONG|ERROR" "$out" | head -6)"
  rm -f "$out"
}

fail=0
echo "== short cut (2 s, timeout 10 s)"
run 8 10000 2 2
echo "$lines"; echo "status $status after ${took} s"
[ "$status" -eq 0 ] || { echo "FAIL: the job failed after a short cut"; fail=1; }
[ "$(grep -c "no error" <<<"$lines")" -eq 2 ] || { echo "FAIL: a rank saw an error after a short cut"; fail=1; }

echo "== long cut (6 s, timeout 2 s)"
run 4 2000 1 6
echo "$lines"; echo "status $status after ${took} s"
[ "$status" -ne 124 ] || { echo "FAIL: the job hung through a long cut"; fail=1; }
[ "$took" -le $(( 4 + 2 + 15 )) ] || { echo "FAIL: took ${took} s through a long cut"; fail=1; }
! grep -q "WRONG" <<<"$lines" || { echo "FAIL: a wrong result"; fail=1; }
[ $fail -eq 0 ] && echo "link_cut: ok"
exit $fail
