// measure_memory_rates and the start-up probe (earlybird/machine_probe.hpp).
// Collectives go to PMPI_ directly, as everywhere in the runtime: inside the
// PMPI library they must not pass through its own interception.
#include <earlybird/machine_probe.hpp>

#include "base/reduce_kernels.hpp"
#include "topo/topology.hpp"

#include <algorithm>
#include <climits>
#include <cstring>
#include <vector>

namespace earlybird {
namespace {

// The best of `repetitions` of `work` on this rank, every rank starting
// together; the slowest rank's best.
template <class Work>
double best_seconds_of_slowest(MPI_Comm comm, int repetitions, Work work) {
  double best = 1e30;
  for (int k = 0; k < repetitions; ++k) {
    PMPI_Barrier(comm);
    const double start = MPI_Wtime();
    work();
    best = std::min(best, MPI_Wtime() - start);
  }
  double slowest = 0;
  PMPI_Allreduce(&best, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm);
  return slowest;
}

// Past a core's L2 on the project's VM (1 MiB), not past every cache: the
// first touch of the passes' buffers is most of the probe (on that VM 8 MiB
// buffers took 70-100 ms of page faults, 2 MiB ones a quarter of that). On
// Ethernet these rates are under 1 % of the network's beta; on a network of
// 100 Gbit/s they are not, and reductions past the last-level cache cost
// more than measured here: calibrate there (docs/algorithms.md).
constexpr std::size_t kProbeMemoryBytes = 2u << 20;
constexpr int kProbeMemoryRepetitions = 4;
constexpr std::size_t kProbeLargeBytes = 256u << 10;
constexpr int kProbeSmallTrips = 16;
constexpr int kProbeLargeTrips = 4;

// The first world rank outside rank 0's node; -1 when every rank shares it.
int first_rank_off_node_zero(MPI_Comm world) {
  int rank = 0;
  MPI_Comm_rank(world, &rank);
  MPI_Comm node;
  MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int leader = rank;  // the world rank of this node's first rank
  PMPI_Bcast(&leader, 1, MPI_INT, 0, node);
  MPI_Comm_free(&node);
  int candidate = leader == 0 ? INT_MAX : rank;
  int first = INT_MAX;
  PMPI_Allreduce(&candidate, &first, 1, MPI_INT, MPI_MIN, world);
  return first == INT_MAX ? -1 : first;
}

// Median round trip of `bytes` from rank 0 to `peer`, 8 bytes back, after
// one untimed trip; on rank 0 (0 elsewhere). Only rank 0 and `peer` call it.
double median_round_trip(MPI_Comm comm, int peer, std::size_t bytes, int trips) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::vector<char> buffer(std::max<std::size_t>(bytes, 8));
  std::vector<double> times;
  for (int k = 0; k <= trips; ++k) {
    const double start = MPI_Wtime();
    if (rank == 0) {
      MPI_Send(buffer.data(), static_cast<int>(bytes), MPI_BYTE, peer, 0, comm);
      MPI_Recv(buffer.data(), 8, MPI_BYTE, peer, 0, comm, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(buffer.data(), static_cast<int>(bytes), MPI_BYTE, 0, 0, comm, MPI_STATUS_IGNORE);
      MPI_Send(buffer.data(), 8, MPI_BYTE, 0, 0, comm);
    }
    if (k > 0) times.push_back(MPI_Wtime() - start);
  }
  std::nth_element(times.begin(), times.begin() + trips / 2, times.end());
  return rank == 0 ? times[static_cast<std::size_t>(trips / 2)] : 0;
}

// Network alpha and beta between rank 0 and `peer` (every rank calls it;
// the others only receive rank 0's result).
void probe_network(MPI_Comm world, int peer, coll::CostModel& network) {
  MPI_Comm comm;  // the probe's messages never meet the caller's
  MPI_Comm_dup(world, &comm);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  double measured[2] = {network.alpha, network.beta};
  if (rank == 0 || rank == peer) {
    const double small = median_round_trip(comm, peer, 8, kProbeSmallTrips);
    const double large = median_round_trip(comm, peer, kProbeLargeBytes, kProbeLargeTrips);
    if (rank == 0) {
      measured[0] = small / 2;
      measured[1] = std::max(0.0, (large - small) / static_cast<double>(kProbeLargeBytes - 8));
    }
  }
  PMPI_Bcast(measured, 2, MPI_DOUBLE, 0, comm);
  MPI_Comm_free(&comm);
  network.alpha = measured[0];
  network.beta = measured[1];
}

}  // namespace

MemoryRates measure_memory_rates(MPI_Comm comm, std::size_t bytes, int repetitions) {
  const std::size_t n = std::max<std::size_t>(1, bytes / sizeof(float));
  std::vector<float> a(n, 1.0f), b(n, 2.0f), c(n, 0.0f);
  const double copy_s =
      best_seconds_of_slowest(comm, repetitions, [&] { std::memcpy(b.data(), a.data(), n * sizeof(float)); });
  const double reduce_s = best_seconds_of_slowest(comm, repetitions, [&] {
    kernels::reduce(Datatype::float32, Op::sum, b.data(), b.data(), a.data(), n);  // the runtime's own loop
  });
  const double reduce_apart_s = best_seconds_of_slowest(comm, repetitions, [&] {
    kernels::reduce(Datatype::float32, Op::sum, c.data(), a.data(), b.data(), n);
  });
  const volatile float kept = b[n - 1] + c[n - 1];  // the results are used: the loops stay
  (void)kept;
  const double moved = static_cast<double>(n * sizeof(float));
  return {copy_s / moved, reduce_s / moved, reduce_apart_s / moved};
}

std::size_t past_caches_bytes(std::size_t floor) { return std::max(floor, topo::last_level_cache_bytes()); }

std::optional<coll::MachineProfile> probe_machine(MPI_Comm world, const coll::MachineProfile& defaults) {
  const int peer = first_rank_off_node_zero(world);
  if (peer < 0) return std::nullopt;  // one node: its level keeps the defaults
  coll::MachineProfile probed = defaults;
  coll::CostModel& network = probed.network.model;
  const MemoryRates rates = measure_memory_rates(world, kProbeMemoryBytes, kProbeMemoryRepetitions);
  network.gamma = rates.reduce_s_per_byte;  // the same maxima on every rank
  network.copy_per_byte = rates.copy_s_per_byte;
  network.gamma_apart = rates.reduce_apart_s_per_byte;
  probe_network(world, peer, network);
  probed.source = "start-up probe";
  return probed;
}

}  // namespace earlybird
