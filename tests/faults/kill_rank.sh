#!/usr/bin/env bash
# Faults tier: a rank killed with SIGKILL in the middle of a collective, on
# one node (kill_rank.cpp). The job must end (survivors fail with an error
# naming the cause, or mpirun ends them) within EARLYBIRD_TIMEOUT_MS + 10 s,
# with a non-zero status, and leave no shared-memory segment or Open MPI
# session directory behind.
#   kill_rank.sh PROGRAM RANKS [mpirun options...]
set -uo pipefail
program="$1" ranks="$2"
shift 2
timeout_ms=3000
leftovers() { ls /dev/shm 2>/dev/null; ls -d /tmp/ompi.* 2>/dev/null; ls -d /dev/shm/* 2>/dev/null; }
before="$(leftovers | sort)"
start=$(date +%s)
EARLYBIRD_TIMEOUT_MS=$timeout_ms timeout 120 mpirun -x EARLYBIRD_TIMEOUT_MS -np "$ranks" --oversubscribe "$@" "$program" >/tmp/kill_rank.$$ 2>&1
status=$?
took=$(( $(date +%s) - start ))
sleep 1  # let mpirun's cleanup finish
after="$(leftovers | sort)"
echo "status $status after ${took} s"
tail -5 /tmp/kill_rank.$$; rm -f /tmp/kill_rank.$$
fail=0
[ "$status" -ne 0 ] || { echo "FAIL: the job ended with status 0 although a rank was killed"; fail=1; }
[ "$status" -ne 124 ] || { echo "FAIL: the job hung (killed by timeout after 120 s)"; fail=1; }
[ "$took" -le $(( timeout_ms / 1000 + 10 )) ] || { echo "FAIL: took ${took} s, over the timeout + 10 s"; fail=1; }
new="$(comm -13 <(echo "$before") <(echo "$after"))"
[ -z "$new" ] || { echo "FAIL: left behind: $new"; fail=1; }
[ $fail -eq 0 ] && echo "kill_rank: ok (P = $ranks)"
exit $fail
