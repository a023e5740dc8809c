// Internal: the slot of one whole vector, shared by the allreduce generators
// that move whole vectors (linear, recursive doubling).
#pragma once

#include <earlybird/collectives/schedule.hpp>

#include <cstddef>

namespace earlybird::coll::detail {

// Vector number `index` of `count` elements in `buffer` of `rank`: scratch
// holds several vectors side by side, input and output only vector 0.
inline Slot whole_vector(int rank, Buffer buffer, std::size_t count, std::size_t index = 0) {
  return {rank, buffer, {index * count, count}};
}

}  // namespace earlybird::coll::detail
