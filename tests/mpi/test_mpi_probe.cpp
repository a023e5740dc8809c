// MPI tier: the cost profile `auto` chooses with after the start-up probe
// (earlybird/machine_probe.hpp). Every rank holds the same numbers; on one
// node, or with EARLYBIRD_PROBE=0, they are the defaults; across nodes (the
// multihost tier) the network level is measured (alpha, beta, gamma and copy
// positive and finite) and the node level keeps the defaults. An allreduce
// chosen with the profile is exact. MPI is initialised here, so it outlives
// the Runtime. The calibration's pass past the caches (past_caches_bytes)
// is at least its floor and at least as large as the largest data or
// unified cache Linux lists for CPU 0 (sysfs, read independently of hwloc).
#include "../common/oracle.hpp"
#include "mpi_check.hpp"

#include <earlybird/earlybird.hpp>
#include <earlybird/machine_probe.hpp>

#include <mpi.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

using namespace earlybird;
using earlybird::testing::count_wrong;
using earlybird::testing::JobDeadline;
using earlybird::testing::make_input;
using earlybird::testing::MpiCheck;

namespace {

std::array<double, 6> numbers_of(const coll::LevelCosts& level) {
  const coll::CostModel& m = level.model;
  return {m.alpha, m.beta, m.gamma, m.copy_cost(), m.per_step, level.per_call};
}

bool same_level(const coll::LevelCosts& a, const coll::LevelCosts& b) { return numbers_of(a) == numbers_of(b); }

// Every rank holds bit-identical numbers (their minima and maxima agree).
bool same_on_every_rank(const coll::MachineProfile& profile) {
  std::vector<double> mine;
  for (const coll::LevelCosts* level : {&profile.node, &profile.network})
    for (double x : numbers_of(*level)) mine.push_back(x);
  std::vector<double> low(mine.size()), high(mine.size());
  MPI_Allreduce(mine.data(), low.data(), static_cast<int>(mine.size()), MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(mine.data(), high.data(), static_cast<int>(mine.size()), MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return low == high;
}

bool spans_nodes() {
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int local = 0, all = 0;
  MPI_Comm_size(node, &local);
  MPI_Comm_size(MPI_COMM_WORLD, &all);
  MPI_Comm_free(&node);
  int fewer = local < all ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &fewer, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return fewer != 0;
}

// Bytes in a sysfs cache size such as "32768K"; 0 when unreadable.
std::size_t sysfs_size_bytes(const std::string& path) {
  std::ifstream in(path);
  std::size_t value = 0;
  char unit = 0;
  if (!(in >> value)) return 0;
  in >> unit;
  return unit == 'K' ? value << 10 : unit == 'M' ? value << 20 : value;
}

// The largest data or unified cache of CPU 0 in sysfs; 0 when sysfs lists none.
std::size_t largest_sysfs_cache_bytes() {
  std::size_t largest = 0;
  for (int index = 0; index < 16; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    std::ifstream type_file(dir + "type");
    std::string type;
    if (!(type_file >> type)) continue;
    if (type == "Data" || type == "Unified") largest = std::max(largest, sysfs_size_bytes(dir + "size"));
  }
  return largest;
}

void check_past_caches_pass(MpiCheck& check) {
  constexpr std::size_t floor = 8u << 20;
  check.expect(past_caches_bytes(floor) >= floor, "the pass past the caches is at least its floor");
  const std::size_t sysfs = largest_sysfs_cache_bytes();
  if (sysfs == 0) return;  // no sysfs cache list: nothing independent to compare with
  check.expect(past_caches_bytes(1) >= sysfs, "the pass past the caches spans the last-level cache: " +
                                                  std::to_string(past_caches_bytes(1)) + " bytes, sysfs " +
                                                  std::to_string(sysfs));
}

bool positive_and_finite(double x) { return std::isfinite(x) && x > 0; }

void check_profile(const coll::MachineProfile& profile, MpiCheck& check) {
  const coll::MachineProfile defaults = coll::default_profile();
  const char* probe = std::getenv("EARLYBIRD_PROBE");
  const bool probed = spans_nodes() && !(probe && std::string(probe) == "0");
  check.expect(same_on_every_rank(profile), "every rank holds the same cost profile");
  check.expect(same_level(profile.node, defaults.node), "the node level keeps the defaults");
  if (!probed) {
    check.expect(profile.source == "defaults" && same_level(profile.network, defaults.network),
                 "without a probe (one node, or EARLYBIRD_PROBE=0) the profile is the defaults: source '" +
                     profile.source + "'");
    return;
  }
  const coll::CostModel& net = profile.network.model;
  check.expect(profile.source == "start-up probe", "across nodes the profile is the probe's: source '" + profile.source + "'");
  check.expect(positive_and_finite(net.alpha) && std::isfinite(net.beta) && net.beta >= 0 &&
                   positive_and_finite(net.gamma) && positive_and_finite(net.copy_cost()),
               "the probed network level is positive and finite: alpha " + std::to_string(net.alpha) + ", beta " +
                   std::to_string(net.beta) + ", gamma " + std::to_string(net.gamma) + ", copy " +
                   std::to_string(net.copy_cost()));
  check.expect(net.per_step == defaults.network.model.per_step && profile.network.per_call == defaults.network.per_call,
               "the probe keeps the runtime's own costs (per_step, per_call) at the defaults");
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  setenv("OMPI_MCA_osc_rdma_priority", "1", 0);  // as Runtime does (test_mpi_warmup.cpp)
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int code = 1;
  {
    JobDeadline deadline(rank, std::chrono::seconds(120));
    MpiCheck check(rank);
    {
      Runtime runtime(&argc, &argv);
      check_profile(runtime.cost_profile(), check);
      check_past_caches_pass(check);
      Communicator world = runtime.world();
      for (std::size_t count : {std::size_t{1}, std::size_t{3000}, std::size_t{300000}}) {
        std::vector<float> v = make_input<float>(world.rank(), count, Op::sum);
        check.wait(world.allreduce(std::span<float>(v), Op::sum), "auto allreduce of " + std::to_string(count));
        check.expect(count_wrong(v, world.size(), Op::sum) == 0,
                     "auto allreduce of " + std::to_string(count) + " floats with the profile is exact");
      }
    }
    code = check.finish("test_mpi_probe");
  }
  MPI_Finalize();
  return code;
}
