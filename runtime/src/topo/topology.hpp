// Machine topology through hwloc: core counts and thread binding.
#pragma once

namespace earlybird::topo {

// Physical cores of this machine (at least 1).
int core_count();
// Binds the calling thread to core `core` (modulo the core count). Returns
// false when hwloc cannot bind (binding is an optimisation, never required).
bool bind_this_thread(int core);
// CPUs this process may run on (its affinity mask; mpirun often narrows it
// to one core per rank). Measured once, at the first call.
int allowed_cpus();
// Records that this process runs with more ranks (or simulated ranks) per
// node than cores. Process-wide and sticky.
void note_oversubscribed();
// True when this process's threads compete for cores with the threads they
// wait on: bound to one CPU, or oversubscribed. Pollers and waiters must not
// spin then.
bool cores_shared();
// True when the node runs more ranks than it has cores: a thread spinning
// for a peer may keep that peer off the CPU.
bool oversubscribed();
// Threads a rank may use for reductions when `local_ranks` ranks share the
// node: cores / local_ranks, at least 1.
int thread_budget(int local_ranks);

}  // namespace earlybird::topo
