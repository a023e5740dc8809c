// The algorithm a collective runs when the call names none: a hand-written
// table by collective, size and P, from the sweeps in docs/benchmarks.md, until
// the cost model replaces it. Shared by the runtime and the PMPI library (which
// logs the choice), so both always agree.
#pragma once

#include <earlybird/collectives/catalogue.hpp>

#include <cstddef>
#include <string>

namespace earlybird::config {

// Calls publishing up to this many bytes per rank on a communicator whose
// windows are all directly reachable run inline_flags (runtime/src/exec/inline_collective.hpp:
// 8 cache lines of 56 data bytes).
constexpr std::size_t kInlineFlagsBytes = 448;

// `bytes`: count x element size (per block for allgather and reduce-scatter);
// `commutative`: whether the operator may be applied out of rank order
// (true for collectives that reduce nothing); `direct`: every rank's window
// is directly reachable (one node, shared window). "" when no algorithm suits.
std::string default_algorithm(coll::Collective collective, std::size_t bytes, int ranks, bool commutative,
                              bool direct = false);

}  // namespace earlybird::config
