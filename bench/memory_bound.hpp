// The memory-traffic bound of an allreduce inside one node: what the memory
// system allows when every rank moves only what it must, at the copy and
// reduce rates measured in the same run (every rank at once, so ranks share
// the memory system as the collective's do).
//
// Any allreduce of m bytes over P ranks on one node must, per rank (one core
// each), reduce (P - 1) slices of m / P into its own slice of the result and
// copy the (P - 1) other reduced slices into its output:
//   bound = (P - 1) / P * m * (1 / reduce rate + 1 / copy rate)
// (reduce rate: bytes of b per second for b += a, the cheapest reduction:
// c = a + b moves one stream more, so the bound stays a lower bound for
// either). Earlybird's large
// allreduces split reductions across TBB workers; on a node with no spare
// core per rank (this 2-core VM at P = 2) the bound holds as stated.
#pragma once

#include <earlybird/machine_probe.hpp>

#include <cstddef>

namespace earlybird::bench {

// The rates: earlybird::measure_memory_rates (earlybird/machine_probe.hpp),
// over the collective's own size, in the same run.

// Seconds; 0 at P = 1 (nothing to move).
double allreduce_memory_bound_s(const MemoryRates& rates, std::size_t bytes, int ranks);

}  // namespace earlybird::bench
