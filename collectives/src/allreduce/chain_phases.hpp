// Internal: the two passes of a pipelined chain allreduce (0 -> ... -> P-1
// reducing, P-1 -> ... -> 0 returning the result), shared by `chain` (rank
// order) and the sorted linear tree (arrival order), which differ only in how
// the runtime binds virtual ranks.
#pragma once

#include <earlybird/collectives/builder.hpp>

#include <cstddef>

namespace earlybird::coll::detail {

// Appends the reduce pass and the return pass per segment of at most
// `segment_elems` elements (0: one segment), then copies input to output
// where nothing was written (P = 1). chain.cpp documents cost and scratch.
void chain_allreduce_phases(Builder& b, std::size_t segment_elems);

}  // namespace earlybird::coll::detail
