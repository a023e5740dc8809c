// The memory-traffic bound of an allreduce inside one node: what the memory
// system allows when every rank moves only what it must, at the copy and
// reduce rates measured in the same run (every rank at once, so ranks share
// the memory system as the collective's do).
//
// Any allreduce of m bytes over P ranks on one node must, per rank (one core
// each), reduce (P - 1) slices of m / P into its own slice of the result and
// copy the (P - 1) other reduced slices into its output:
//   bound = (P - 1) / P * m * (1 / reduce rate + 1 / copy rate)
// (reduce rate: bytes of c per second for c = a + b). Earlybird's large
// allreduces split reductions across TBB workers; on a node with no spare
// core per rank (this 2-core VM at P = 2) the bound holds as stated.
#pragma once

#include <mpi.h>

#include <cstddef>

namespace earlybird::bench {

struct MemoryRates {
  double copy_bytes_per_s = 0;
  double reduce_bytes_per_s = 0;
};

// Each rank copies and reduces `bytes` of floats, every rank at once; the
// best of a few repetitions per rank, the slowest rank's. Collective over comm.
MemoryRates measure_memory_rates(std::size_t bytes, MPI_Comm comm);

// Seconds; 0 at P = 1 (nothing to move).
double allreduce_memory_bound_s(const MemoryRates& rates, std::size_t bytes, int ranks);

}  // namespace earlybird::bench
