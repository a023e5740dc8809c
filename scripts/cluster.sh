#!/usr/bin/env bash
# Emulated cluster on one machine: N "hosts", each a network namespace with its
# own hostname (UTS namespace) and its own IPC namespace, joined by veth pairs
# to a bridge in a switch namespace. Addresses are private (10.77.0.0/24) and
# exist only inside the namespaces this script creates.
#
#   scripts/cluster.sh up N [--rate R] [--slots S]   create N hosts, S ranks each
#   scripts/cluster.sh mpirun ARGS...                 mpirun across the hosts
#                      (EB_CLUSTER_NET=ucx, the default: pml/osc ucx over
#                      TCP; EB_CLUSTER_NET=tcp: Debian's default ob1 + btl/tcp)
#   scripts/cluster.sh exec HOST CMD...               run CMD on host HOST (0..N-1)
#   scripts/cluster.sh status                         what exists now
#   scripts/cluster.sh down                           remove everything (idempotent)
#   scripts/cluster.sh check                          exit 0 when the testbed can be built here
#
# --rate limits every host's link with tc tbf (e.g. 1gbit); without it the
# links run as fast as the kernel's veth. Needs root (namespaces, tc).
#
# Why each setting (docs/design.md, "Transports"; docs/benchmarks.md, "Across hosts"):
# - Separate IPC namespaces: UCX decides "same machine" by boot id unless the
#   IPC namespace differs, and would otherwise use shared memory between hosts.
# - mpirun runs in host 0's namespaces and starts its daemons on the other
#   hosts through a launcher script (plm_rsh_agent) in place of ssh.
# - Host h runs on CPU h mod (CPUs here): emulated hosts do not share a core
#   when there are enough, and a rank sees the cores its host has (so the
#   runtime polls as on a node with that many cores). mpirun binds nothing
#   itself (--bind-to none): its default put every host's first rank on one
#   core.
# - mpi_yield_when_idle where ranks share a CPU (cmd_mpirun): Open MPI's own
#   remedy for oversubscription, which it cannot detect here.
# - pml ucx + osc ucx with the opal_common_ucx settings: Open MPI 4.1 refuses
#   UCX on non-InfiniBand devices without them; osc/rdma fails over TCP and
#   osc/pt2pt refuses MPI_THREAD_MULTIPLE. osc/sm beside it: the shared
#   segment of a host's ranks (MPI_Win_allocate_shared, which osc/ucx cannot
#   make; the hybrid transport's node part).
set -euo pipefail

readonly PREFIX=eb-h
readonly SWITCH=eb-sw
readonly SUBNET=10.77.0
readonly STATE=/run/earlybird-cluster

die() { echo "cluster.sh: $*" >&2; exit 1; }
need_root() { [ "$(id -u)" -eq 0 ] || die "needs root (network namespaces, tc)"; }
host_ns() { echo "${PREFIX}$1"; }
host_count() { cat "$STATE/hosts" 2>/dev/null || echo 0; }

# Runs a command inside host $1's network, UTS and IPC namespaces.
in_host() {
  local h="$1"
  shift
  # ip netns exec (not nsenter --net) also mounts the host's own /sys, where
  # UCX looks for network devices.
  ip netns exec "$(host_ns "$h")" nsenter --uts="$STATE/uts-$h" --ipc="$STATE/ipc-$h" -- "$@"
}

# Why the testbed cannot be built here, or nothing.
unavailable_reason() {
  [ "$(id -u)" -eq 0 ] || { echo "needs root for network namespaces"; return; }
  command -v ip >/dev/null || { echo "iproute2 (ip) is not installed"; return; }
  command -v nsenter >/dev/null || { echo "util-linux nsenter is not installed"; return; }
  local probe="eb-probe-$$"
  if ! ip netns add "$probe" 2>/dev/null; then echo "cannot create network namespaces here"; return; fi
  ip netns del "$probe"
  unshare --uts --ipc true 2>/dev/null || { echo "cannot create UTS/IPC namespaces here"; return; }
}

make_persistent_ns() {  # KIND(uts|ipc) HOST
  local file="$STATE/$1-$2"
  touch "$file"
  unshare "--$1=$file" true
}

add_host() {  # INDEX RATE
  local h="$1" rate="$2" ns
  ns="$(host_ns "$h")"
  ip netns add "$ns"
  ip link add "veth$h" netns "$ns" type veth peer name "port$h" netns "$SWITCH"
  ip -n "$ns" addr add "$SUBNET.$((10 + h))/24" dev "veth$h"
  ip -n "$ns" link set lo up
  ip -n "$ns" link set "veth$h" up
  ip -n "$SWITCH" link set "port$h" master br0 up
  if [ -n "$rate" ]; then
    # Both directions: the host's egress and the switch port's egress (its ingress).
    ip netns exec "$ns" tc qdisc add dev "veth$h" root tbf rate "$rate" burst 256kb latency 50ms
    ip netns exec "$SWITCH" tc qdisc add dev "port$h" root tbf rate "$rate" burst 256kb latency 50ms
  fi
  make_persistent_ns uts "$h"
  make_persistent_ns ipc "$h"
  in_host "$h" hostname "$ns"
}

write_launcher() {  # the plm_rsh_agent: "launcher HOST CMD..." runs CMD on HOST
  cat >"$STATE/launcher" <<EOF
#!/usr/bin/env bash
host="\$1"; shift
i="\${host#$PREFIX}"
cpu_of() { echo \$((\$1 % $(nproc))); }
exec taskset -c \$(cpu_of \$i) ip netns exec $PREFIX\$i nsenter --uts=$STATE/uts-\$i --ipc=$STATE/ipc-\$i -- /bin/sh -c "\$*"
EOF
  chmod +x "$STATE/launcher"
}

write_hostfile() {  # N SLOTS
  : >"$STATE/hostfile"
  for ((h = 0; h < $1; h++)); do echo "$(host_ns "$h") slots=$2" >>"$STATE/hostfile"; done
  # Every host resolves every other by name (mpirun compares names).
  : >"$STATE/hosts.txt"
  for ((h = 0; h < $1; h++)); do echo "$SUBNET.$((10 + h)) $(host_ns "$h")" >>"$STATE/hosts.txt"; done
}

cmd_up() {
  local n="${1:-}" rate="" slots=1
  [[ "$n" =~ ^[1-9][0-9]*$ ]] && [ "$n" -le 200 ] || die "usage: up N [--rate R] [--slots S] (N in 1..200)"
  shift
  while [ $# -gt 0 ]; do
    case "$1" in
      --rate) rate="$2"; shift 2 ;;
      --slots) slots="$2"; shift 2 ;;
      *) die "unknown option $1" ;;
    esac
  done
  need_root
  local why
  why="$(unavailable_reason)"
  [ -z "$why" ] || die "$why"
  cmd_down >/dev/null
  mkdir -p "$STATE"
  mount --make-private "$STATE" 2>/dev/null || { mount --bind "$STATE" "$STATE"; mount --make-private "$STATE"; }
  ip netns add "$SWITCH"
  ip -n "$SWITCH" link add br0 type bridge
  ip -n "$SWITCH" link set br0 up
  for ((h = 0; h < n; h++)); do add_host "$h" "$rate"; done
  echo "$n" >"$STATE/hosts"
  echo "${rate:-unlimited}" >"$STATE/rate"
  echo "$slots" >"$STATE/slots"
  write_launcher
  write_hostfile "$n" "$slots"
  echo "cluster.sh: $n hosts ($slots slots each, link ${rate:-unlimited}) on $SUBNET.0/24"
}

cmd_down() {
  local h
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^(${PREFIX}[0-9]+|$SWITCH)\$" || true); do
    # Processes left in a host (a crashed run) would keep its namespace alive.
    ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
    ip netns del "$ns" 2>/dev/null || true
  done
  if [ -d "$STATE" ]; then
    for f in "$STATE"/uts-* "$STATE"/ipc-*; do
      [ -e "$f" ] || continue
      umount "$f" 2>/dev/null || true
      rm -f "$f"
    done
    umount "$STATE" 2>/dev/null || true
    rm -rf "$STATE"
  fi
  echo "cluster.sh: down"
}

cmd_status() {
  if [ ! -f "$STATE/hosts" ]; then echo "cluster.sh: no testbed"; return 1; fi
  echo "cluster.sh: $(host_count) hosts, $(cat "$STATE/slots") slots each, link $(cat "$STATE/rate")"
  cat "$STATE/hostfile"
}

# The mpirun settings every multi-host run uses (earlybird and MPI alike).
cmd_mpirun() {
  [ -f "$STATE/hosts" ] || die "no testbed: run 'scripts/cluster.sh up N' first"
  local network=()
  case "${EB_CLUSTER_NET:-ucx}" in
    ucx)
      network=(--mca pml ucx --mca osc ucx,sm --mca opal_common_ucx_tls any --mca opal_common_ucx_devices any
        -x UCX_TLS=tcp,sm,self -x UCX_TCP_NODELAY=y) ;;
    tcp) network=(--mca pml ob1) ;;  # Debian's default: ob1 over btl/tcp, no UCX
    *) die "EB_CLUSTER_NET=${EB_CLUSTER_NET} is not ucx or tcp" ;;
  esac
  # Ranks that share a CPU (several slots per host, or more hosts than
  # CPUs): Open MPI's busy polling would hold the CPU its peer needs (15 ms
  # per 8-byte allreduce on 2 x 2). It yields when told, as it does by itself
  # on a node it knows is oversubscribed; a host here declares S slots on one CPU.
  local sharing=()
  if [ "$(cat "$STATE/slots")" -gt 1 ] || [ "$(host_count)" -gt "$(nproc)" ]; then
    sharing=(--mca mpi_yield_when_idle 1)
  fi
  taskset -c 0 ip netns exec "$(host_ns 0)" nsenter --uts="$STATE/uts-0" --ipc="$STATE/ipc-0" -- \
    mpirun --allow-run-as-root --oversubscribe --bind-to none "${sharing[@]}" \
    --hostfile "$STATE/hostfile" \
    --mca plm_rsh_agent "$STATE/launcher" \
    --mca oob_tcp_if_include "$SUBNET.0/24" --mca btl_tcp_if_include "$SUBNET.0/24" \
    --mca btl self,vader,tcp "${network[@]}" "$@"
}

cmd_exec() {
  local h="${1:-}"
  [[ "$h" =~ ^[0-9]+$ ]] && [ "$h" -lt "$(host_count)" ] || die "usage: exec HOST CMD... (HOST in 0..$(($(host_count) - 1)))"
  shift
  in_host "$h" "$@"
}

case "${1:-}" in
  up) shift; cmd_up "$@" ;;
  down) need_root; cmd_down ;;
  mpirun) shift; cmd_mpirun "$@" ;;
  exec) shift; cmd_exec "$@" ;;
  status) cmd_status ;;
  check) why="$(unavailable_reason)"; [ -z "$why" ] || { echo "$why"; exit 1; } ;;
  *) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
