// Internal: slots of whole blocks (vectors) of `count` elements, shared by the
// generators that lay buffers out in blocks: block j of a buffer is elements
// [j*count, (j+1)*count).
#pragma once

#include <earlybird/collectives/builder.hpp>
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

// Base of the generators that lay every buffer out in blocks of the call's
// count (allgather): the Builder, and block slots and the input bound to it.
class BlockGenerator {
 protected:
  explicit BlockGenerator(Builder& b) : b_(b), count_(b.count()) {}
  // Blocks [first, first + n) of `buffer` on `rank`.
  Slot blocks(int rank, Buffer buffer, int first, int n) const { return block_run(rank, buffer, count_, first, n); }
  // `rank`'s whole input (one block).
  Slot input_of(int rank) const { return {rank, Buffer::input, {0, count_}}; }

  Builder& b_;
  std::size_t count_;
};

}  // namespace earlybird::coll::detail
