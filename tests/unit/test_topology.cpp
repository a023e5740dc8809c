// Thread placement policies (runtime/src/topo/topology.hpp) as pure
// functions: when ranks' CPU masks must overlap (pollers then yield), the
// share of cores a rank gets, and where a pinned progress thread goes — never
// outside the rank's own mask (before f07ae2d, under mpirun --bind-to core at
// P = 8 on 16 cores, rank r's progress thread went to core 2r, another
// rank's: ~4 ms stalls, docs/benchmarks.md "A 16-core node").
#include <doctest/doctest.h>

#include "topo/topology.hpp"

#include <numeric>
#include <vector>

using namespace earlybird::topo;

namespace {

std::vector<int> cpus(int first, int count) {
  std::vector<int> list(static_cast<std::size_t>(count));
  std::iota(list.begin(), list.end(), first);
  return list;
}

}  // namespace

TEST_CASE("masks overlap when ranks x allowed CPUs exceed the cores") {
  CHECK_FALSE(masks_overlap(1, 2, 2));    // mpirun --bind-to core, P = 2 on 2 cores
  CHECK_FALSE(masks_overlap(1, 16, 16));  // --bind-to core, P = 16 on 16 cores
  CHECK_FALSE(masks_overlap(2, 1, 2));    // one rank with the whole machine
  CHECK_FALSE(masks_overlap(4, 4, 16));   // --map-by ppr:4:node:PE=4
  CHECK(masks_overlap(16, 8, 16));        // mpirun's socket binding, P = 8 on 16 cores
  CHECK(masks_overlap(2, 2, 2));          // two emulated hosts, each seeing both CPUs
  CHECK(masks_overlap(2, 4, 2));          // four, oversubscribed
}

TEST_CASE("a rank's share of cores is at least one") {
  CHECK(share_of_cores(16, 8) == 2);
  CHECK(share_of_cores(16, 16) == 1);
  CHECK(share_of_cores(2, 4) == 1);
  CHECK(share_of_cores(16, 0) == 16);
  CHECK(share_of_cores(16, 3) == 5);
}

TEST_CASE("the progress thread stays where the launcher put a rank") {
  for (int rank = 0; rank < 8; ++rank) {
    CHECK(cpu_in_share({rank}, 16, rank, 8) == -1);               // --bind-to core: its own core
    CHECK(cpu_in_share(cpus(2 * rank, 2), 16, rank, 8) == -1);    // exactly its share
  }
  CHECK(cpu_in_share({}, 16, 0, 1) == -1);
}

TEST_CASE("under a wide mask the progress thread goes to the rank's share, inside the mask") {
  const std::vector<int> all = cpus(0, 16);
  for (int rank = 0; rank < 8; ++rank) CHECK(cpu_in_share(all, 16, rank, 8) == 2 * rank);
  for (int rank = 0; rank < 16; ++rank) CHECK(cpu_in_share(all, 16, rank, 16) == rank);
  // A socket's mask (CPUs 8..15) on a 16-core node with 4 ranks: always a
  // CPU of the mask (distinct CPUs only where every local rank has the same
  // mask, as above: the runtime cannot see the other ranks' masks).
  const std::vector<int> socket = cpus(8, 8);
  for (int rank = 0; rank < 4; ++rank) {
    const int cpu = cpu_in_share(socket, 16, rank, 4);
    CHECK(cpu >= 8);
    CHECK(cpu <= 15);
  }
}
