// Machine topology through hwloc: core counts, the last-level cache and thread binding.
#pragma once

#include <cstddef>
#include <vector>

namespace earlybird::topo {

// Physical cores of this machine (at least 1).
int core_count();
// The largest data or unified cache of this machine, in bytes (the last
// level, shared by the cores under it); 0 where hwloc does not say.
std::size_t last_level_cache_bytes();
// Binds the calling thread to the operating system's CPU `cpu`. Returns
// false when it cannot (binding is an optimisation, never required).
bool bind_this_thread_to_cpu(int cpu);
// CPUs this process may run on (its affinity mask; mpirun narrows it to one
// core per rank for two ranks, to a socket beyond). Measured once, at the
// first call.
int allowed_cpus();
// Records that `ranks` ranks (processes, or simulated ranks as threads)
// share this machine's CPUs. Process-wide; the largest count recorded stays,
// and so do oversubscribed() and cores_shared_with_other_ranks() once true.
void note_machine_ranks(int ranks);
// True when the node runs more ranks than it has cores: a thread spinning
// for a peer may keep that peer off the CPU.
bool oversubscribed();
// True when other ranks' threads may run on this rank's CPUs: oversubscribed,
// or the ranks' affinity masks overlap (each rank may use more CPUs than
// cores / ranks, as when mpirun binds ranks to a socket or not at all).
// A thread that spins then can hold a CPU a peer's thread waits for, for a
// whole scheduler slice (milliseconds): pollers and waiters yield instead.
bool cores_shared_with_other_ranks();
// True when this process's threads may compete for CPUs with the threads
// they wait on: bound to one CPU, or sharing CPUs with other ranks.
// Pollers and waiters must not spin then.
bool cores_shared();
// Threads a rank may use for reductions when `ranks` ranks share the
// machine's CPUs: cores / ranks, at most the CPUs it may run on, at least 1.
int thread_budget(int ranks);
// The policies above as pure functions of what they read (tested without
// the machine, tests/unit/test_topology.cpp):
// whether `ranks` masks of `allowed` CPUs each must overlap on `cores` CPUs;
bool masks_overlap(int allowed, int ranks, int cores);
// cores / ranks, at least 1;
int share_of_cores(int cores, int ranks);
// the progress thread's CPU given the allowed CPUs (ascending), as below.
int cpu_in_share(const std::vector<int>& allowed, int cores, int local_rank, int local_ranks);
// The CPU for the progress thread of node rank `local_rank` of `local_ranks`:
// one of this process's allowed CPUs, spread so that local ranks that all
// have the same wide mask get different CPUs; -1 where the mask already is
// this rank's share of the node (the launcher placed it: leave it there).
int progress_thread_cpu(int local_rank, int local_ranks);

}  // namespace earlybird::topo
