#include "topology.hpp"

#include <hwloc.h>

#include <algorithm>
#include <atomic>
#include <mutex>

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

bool bind_this_thread(int core) {
  hwloc_topology_t t = topology();
  if (!t) return false;
  hwloc_obj_t obj = hwloc_get_obj_by_type(t, HWLOC_OBJ_CORE, static_cast<unsigned>(core % core_count()));
  if (!obj || !obj->cpuset) return false;
  return hwloc_set_cpubind(t, obj->cpuset, HWLOC_CPUBIND_THREAD) == 0;
}

int allowed_cpus() {
  static const int cpus = [] {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
    return std::max(1, CPU_COUNT(&set));
  }();
  return cpus;
}

namespace {
std::atomic<bool> g_oversubscribed{false};
}  // namespace

void note_oversubscribed() { g_oversubscribed.store(true, std::memory_order_relaxed); }

bool oversubscribed() { return g_oversubscribed.load(std::memory_order_relaxed); }

bool cores_shared() { return allowed_cpus() == 1 || g_oversubscribed.load(std::memory_order_relaxed); }

int thread_budget(int local_ranks) { return std::max(1, core_count() / std::max(1, local_ranks)); }

}  // namespace earlybird::topo
