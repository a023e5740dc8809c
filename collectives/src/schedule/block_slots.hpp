// Internal: slots of whole blocks (vectors) of `count` elements, shared by the
// generators that lay buffers out in blocks: block j of a buffer is elements
// [j*count, (j+1)*count).
#pragma once

#include <earlybird/collectives/schedule.hpp>

#include <cstddef>

namespace earlybird::coll::detail {

// Blocks [first, first + n) of `buffer` on `rank`.
inline Slot block_run(int rank, Buffer buffer, std::size_t count, int first, int n) {
  return {rank, buffer, {static_cast<std::size_t>(first) * count, static_cast<std::size_t>(n) * count}};
}

// Block (vector) number `index` in `buffer` of `rank`: scratch holds several
// side by side, an allreduce's input and output only block 0.
inline Slot block_slot(int rank, Buffer buffer, std::size_t count, std::size_t index = 0) {
  return {rank, buffer, {index * count, count}};
}

}  // namespace earlybird::coll::detail
