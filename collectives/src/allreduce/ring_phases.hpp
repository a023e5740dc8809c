// Internal: the two phases of a ring allreduce, shared by the plain ring and
// the segmented (pipelined) ring, which differ only in segment size.
#pragma once

#include <earlybird/collectives/builder.hpp>

namespace earlybird::coll::detail {

// Appends ring reduce-scatter + ring allgather over P balanced chunks, each
// chunk cut into segments of at most `segment_elems` (0: whole chunks).
void ring_allreduce_phases(Builder& b, std::size_t segment_elems);

}  // namespace earlybird::coll::detail
