#!/usr/bin/env bash
# Faults tier: a rank killed with SIGKILL in the middle of a collective, on
# one node (kill_rank.cpp). The job must end (survivors fail with an error
# naming the cause, or mpirun ends them) within EARLYBIRD_TIMEOUT_MS + 10 s,
# with a non-zero status, and leave no shared-memory segment or Open MPI
# session directory behind.
# With --hosts, the ranks run on as many emulated hosts (scripts/cluster.sh,
# one rank each, root only), and no process may be left in their namespaces.
#   kill_rank.sh PROGRAM RANKS [--hosts] [mpirun options...]
set -uo pipefail
program="$1" ranks="$2"
shift 2
launcher=(mpirun)
cluster="$(cd "$(dirname "$0")" && pwd)/../../scripts/cluster.sh"
if [ "${1:-}" = "--hosts" ]; then
  shift
  if ! why="$("$cluster" check)"; then
    echo "SKIPPED kill_rank across hosts: $why"
    exit 77
  fi
  "$cluster" up "$ranks" --slots 1 >/dev/null || exit 1
  launcher=("$cluster" mpirun)
fi
timeout_ms=3000
leftovers() {
  ls /dev/shm 2>/dev/null; ls -d /tmp/ompi.* 2>/dev/null
  [ "${launcher[0]}" = mpirun ] && return
  for h in $(seq 0 $((ranks - 1))); do ip netns pids "eb-h$h" 2>/dev/null | sed "s/^/process in eb-h$h: /"; done
}
before="$(leftovers | sort)"
start=$(date +%s)
EARLYBIRD_TIMEOUT_MS=$timeout_ms timeout 120 "${launcher[@]}" -x EARLYBIRD_TIMEOUT_MS -np "$ranks" --oversubscribe "$@" "$program" >/tmp/kill_rank.$$ 2>&1
status=$?
took=$(( $(date +%s) - start ))
# Open MPI's daemons remove a killed job's segments shortly after mpirun
# returns: give them up to 10 s.
for _ in $(seq 20); do
  after="$(leftovers | sort)"
  [ -z "$(comm -13 <(echo "$before") <(echo "$after"))" ] && break
  sleep 0.5
done
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
