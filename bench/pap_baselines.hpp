// eb-bench pap, Δ and δ: the two references of the share of the possible
// saving, measured once per size in the same run. Δ is a balanced ring; δ is
// one transfer of the vector between two ranks plus one local reduction.
#pragma once

#include <cmath>

#include "contenders.hpp"
#include "pap_config.hpp"

namespace earlybird::bench::pap {

struct Baselines {
  double balanced_ring_s = kNotAvailable;       // Δ
  int partner = 1;  // rank 0's partner in the transfers: the lowest rank on another node, else rank 1
  double mpi_transfer_s = kNotAvailable;        // the vector between rank 0 and the partner, MPI_Send/Recv
  double earlybird_transfer_s = kNotAvailable;  // the same through earlybird (bcast on a 2-rank communicator)
  double reduction_s = kNotAvailable;           // one local reduction of the vector
  // The faster of the two transfers: δ is a lower bound.
  double transfer_s() const { return std::fmin(mpi_transfer_s, earlybird_transfer_s); }
  double small_delta_s() const { return transfer_s() + reduction_s; }  // δ
  // Δ − δ when it is a usable denominator, otherwise NaN.
  double possible_saving_s() const {
    const double saving = balanced_ring_s - small_delta_s();
    return saving > 0 ? saving : kNotAvailable;
  }
};

// Δ is n/a when the ring failed its warm-up; δ is n/a at P = 1 (no transfer).
// Every value is agreed on every rank.
Baselines measure_baselines(Communicator& comm, const Contender& ring, bool ring_works, Buffers& data, int iterations,
                            MPI_Comm mpi_comm);

}  // namespace earlybird::bench::pap
