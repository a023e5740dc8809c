// eb-bench pap, Δ and δ (pap_baselines.hpp).
#include "pap_baselines.hpp"

#include <chrono>
#include <span>
#include <vector>

#include "bench_common.hpp"
#include "pap_calls.hpp"

namespace earlybird::bench::pap {
namespace {

double median_of(std::vector<double> samples) { return stats_of(std::move(samples)).median; }

// Δ: median over iterations of ē for the ring with no delay.
double balanced_ring_s(const Contender& ring, Buffers& data, int iterations) {
  std::vector<double> ebar;
  for (int k = 0; k < iterations; ++k) {
    two_barriers();
    const double t0 = MPI_Wtime();
    const std::string error = call_catching(ring, data);
    const CallOutcome o = agree(MPI_Wtime() - t0, false, error);
    if (!o.error.empty()) return kNotAvailable;
    ebar.push_back(o.mean_elapsed_s);
  }
  return median_of(ebar);
}

// The rank rank 0 times its transfers with: the lowest rank on another node
// (a collective over nodes must cross between them, so δ is a transfer
// across), or rank 1 when every rank shares rank 0's node. Agreed.
int transfer_partner(MPI_Comm comm) {
  int rank = 0, size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  MPI_Comm node;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  int lowest_on_node = rank;
  MPI_Allreduce(MPI_IN_PLACE, &lowest_on_node, 1, MPI_INT, MPI_MIN, node);
  MPI_Comm_free(&node);
  int partner = lowest_on_node == 0 ? size : rank;  // the ranks off rank 0's node offer themselves
  MPI_Allreduce(MPI_IN_PLACE, &partner, 1, MPI_INT, MPI_MIN, comm);
  return partner < size ? partner : 1;
}

// Half a ping-pong of the whole vector between rank 0 and `partner` with
// MPI_Send/Recv (median); the other ranks wait. Agreed on every rank.
double mpi_transfer_s(std::vector<float>& buffer, int iterations, int partner, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const int count = static_cast<int>(buffer.size());
  std::vector<double> half_round_trips;
  for (int k = 0; k <= iterations; ++k) {  // round 0 is a warm-up
    MPI_Barrier(comm);
    const double t0 = MPI_Wtime();
    if (rank == 0) {
      MPI_Send(buffer.data(), count, MPI_FLOAT, partner, 0, comm);
      MPI_Recv(buffer.data(), count, MPI_FLOAT, partner, 0, comm, MPI_STATUS_IGNORE);
    } else if (rank == partner) {
      MPI_Recv(buffer.data(), count, MPI_FLOAT, 0, 0, comm, MPI_STATUS_IGNORE);
      MPI_Send(buffer.data(), count, MPI_FLOAT, 0, 0, comm);
    }
    if (k > 0) half_round_trips.push_back((MPI_Wtime() - t0) / 2);
  }
  double median = median_of(half_round_trips);
  MPI_Bcast(&median, 1, MPI_DOUBLE, 0, comm);
  return median;
}

// Half a ping-pong of the whole vector through earlybird's data path: a
// binomial bcast (one transfer) from rank 0, then from `partner`, on a
// communicator of the two (median); the other ranks wait. NaN when it
// failed on either rank. Agreed on every rank.
double earlybird_transfer_s(Communicator& comm, std::vector<float>& buffer, int iterations, int partner) {
  const bool in_pair = comm.rank() == 0 || comm.rank() == partner;
  Communicator pair = comm.split(in_pair ? 0 : 1, comm.rank());
  CollectiveOptions options;
  options.algorithm = "binomial";
  options.timeout = std::chrono::seconds(60);
  std::vector<double> half_round_trips;
  for (int k = 0; k <= iterations; ++k) {  // round 0 is a warm-up
    std::string error;
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    try {
      if (in_pair) {
        pair.bcast(std::span<float>(buffer), 0, options).wait();
        pair.bcast(std::span<float>(buffer), 1, options).wait();
      }
    } catch (const std::exception& e) {
      error = e.what();
    }
    const double half_round_trip = (MPI_Wtime() - t0) / 2;
    if (!agree(0, false, error).error.empty()) return kNotAvailable;  // every rank stops together
    if (k > 0) half_round_trips.push_back(half_round_trip);
  }
  double median = median_of(half_round_trips);
  MPI_Bcast(&median, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return median;
}

// One reduction out = left + right with earlybird's own kernel, timed on rank 0
// while the other ranks wait (median). Agreed on every rank.
double reduction_s(std::span<const float> left, int iterations, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  double median = 0;
  if (rank == 0) {
    std::vector<float> right(left.begin(), left.end()), out(left.size());
    const ReduceOp sum(Op::sum);
    std::vector<double> samples;
    for (int k = 0; k <= iterations; ++k) {
      const double t0 = MPI_Wtime();
      sum.apply(Datatype::float32, out.data(), left.data(), right.data(), left.size());
      if (k > 0) samples.push_back(MPI_Wtime() - t0);
    }
    median = median_of(samples);
  }
  MPI_Bcast(&median, 1, MPI_DOUBLE, 0, comm);
  return median;
}

}  // namespace

Baselines measure_baselines(Communicator& comm, const Contender& ring, bool ring_works, Buffers& data, int iterations,
                            MPI_Comm mpi_comm) {
  Baselines b;
  if (ring_works) b.balanced_ring_s = balanced_ring_s(ring, data, iterations);
  if (comm.size() < 2) return b;
  std::vector<float> buffer(data.input.begin(), data.input.end());
  b.partner = transfer_partner(mpi_comm);
  b.mpi_transfer_s = mpi_transfer_s(buffer, iterations, b.partner, mpi_comm);
  b.earlybird_transfer_s = earlybird_transfer_s(comm, buffer, iterations, b.partner);
  b.reduction_s = reduction_s(data.input, iterations, mpi_comm);
  return b;
}

}  // namespace earlybird::bench::pap
