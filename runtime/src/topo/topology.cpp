#include "topology.hpp"

#include <hwloc.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <vector>

#include <sched.h>

namespace earlybird::topo {
namespace {

// Loaded once per process; hwloc topologies are safe for concurrent reads.
hwloc_topology_t topology() {
  static hwloc_topology_t topo = [] {
    hwloc_topology_t t = nullptr;
    if (hwloc_topology_init(&t) != 0 || hwloc_topology_load(t) != 0) return hwloc_topology_t{nullptr};
    return t;
  }();
  return topo;
}

}  // namespace

int core_count() {
  hwloc_topology_t t = topology();
  if (!t) return 1;
  return std::max(1, hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE));
}

std::size_t last_level_cache_bytes() {
  hwloc_topology_t t = topology();
  std::size_t largest = 0;
  if (!t) return largest;
  for (int depth = 0; depth < hwloc_topology_get_depth(t); ++depth)
    for (hwloc_obj_t obj = hwloc_get_next_obj_by_depth(t, depth, nullptr); obj;
         obj = hwloc_get_next_obj_by_depth(t, depth, obj))
      if (hwloc_obj_type_is_dcache(obj->type) && obj->attr)
        largest = std::max(largest, static_cast<std::size_t>(obj->attr->cache.size));
  return largest;
}

bool bind_this_thread_to_cpu(int cpu) {
  if (cpu < 0 || cpu >= CPU_SETSIZE) return false;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return sched_setaffinity(0, sizeof set, &set) == 0;  // 0: the calling thread
}

namespace {

// The CPUs this process may run on, in increasing order, read once (before
// any thread of earlybird binds itself).
const std::vector<int>& allowed_cpu_list() {
  static const std::vector<int> cpus = [] {
    std::vector<int> list;
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0)
      for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
        if (CPU_ISSET(cpu, &set)) list.push_back(cpu);
    return list;
  }();
  return cpus;
}

std::atomic<bool> g_oversubscribed{false};
std::atomic<int> g_machine_ranks{1};
// cores_shared_with_other_ranks(), decided when a count is noted: pollers
// read it on every wait.
std::atomic<bool> g_shared_with_others{false};

}  // namespace

int allowed_cpus() { return std::max(1, static_cast<int>(allowed_cpu_list().size())); }

bool masks_overlap(int allowed, int ranks, int cores) { return ranks > 1 && allowed * ranks > cores; }

void note_machine_ranks(int ranks) {
  allowed_cpu_list();  // read now, on the thread that creates the runtime, before its threads bind
  int known = g_machine_ranks.load(std::memory_order_relaxed);
  while (ranks > known && !g_machine_ranks.compare_exchange_weak(known, ranks)) {
  }
  const int machine_ranks = g_machine_ranks.load(std::memory_order_relaxed);
  if (machine_ranks > core_count()) g_oversubscribed.store(true, std::memory_order_relaxed);
  if (machine_ranks > core_count() || masks_overlap(allowed_cpus(), machine_ranks, core_count()))
    g_shared_with_others.store(true, std::memory_order_relaxed);
}

bool oversubscribed() { return g_oversubscribed.load(std::memory_order_relaxed); }

bool cores_shared_with_other_ranks() { return g_shared_with_others.load(std::memory_order_relaxed); }

bool cores_shared() { return allowed_cpus() == 1 || cores_shared_with_other_ranks(); }

int share_of_cores(int cores, int ranks) { return std::max(1, cores / std::max(1, ranks)); }

int thread_budget(int ranks) { return std::min(share_of_cores(core_count(), ranks), allowed_cpus()); }

int cpu_in_share(const std::vector<int>& allowed, int cores, int local_rank, int local_ranks) {
  const int share = share_of_cores(cores, local_ranks);
  if (static_cast<int>(allowed.size()) <= share) return -1;
  return allowed[static_cast<std::size_t>(local_rank) * static_cast<std::size_t>(share) % allowed.size()];
}

int progress_thread_cpu(int local_rank, int local_ranks) {
  return cpu_in_share(allowed_cpu_list(), core_count(), local_rank, local_ranks);
}

}  // namespace earlybird::topo
