// Internal: broadcast phases, each appending to a Builder a broadcast of rank
// 0's `source` buffer (Buffer::input for a plain bcast, Buffer::output after a
// reduce phase) into every rank's output, rank 0's included (the runtime skips
// that copy when rank 0's input and output are one buffer).
#pragma once

#include <earlybird/collectives/builder.hpp>

#include <cstddef>

namespace earlybird::coll::detail {

void bcast_binomial_phase(Builder& b, Buffer source);
void bcast_chain_phase(Builder& b, Buffer source, std::size_t segment_elems);
void bcast_binary_tree_phase(Builder& b, Buffer source, std::size_t segment_elems);
void bcast_scatter_allgather_phase(Builder& b, Buffer source);

}  // namespace earlybird::coll::detail
