// Internal: the steps the inline_flags entries share (every collective's
// inline_flags.cpp). In the IR a contributor *delivers* its vector: a put
// into slot k (k = the contributor) of each reader's scratch, the reader's
// own contribution a copy into its own slot; reductions fold the P slots in
// rank order. (The runtime's inline lines do the same the other way round,
// readers pulling from the contributor's window: runtime/src/exec/
// inline_collective.hpp. Puts keep the lane rule simple here: a rank's
// scratch is only ever read by that rank.)
#pragma once

#include <earlybird/collectives/builder.hpp>

#include <cstddef>

namespace earlybird::coll::detail {

// Slot k of `reader`'s scratch, for `n` elements.
inline Slot landing(int reader, int k, std::size_t n) {
  return {reader, Buffer::scratch, {static_cast<std::size_t>(k) * n, n}};
}

// `from`'s input `range` into slot `from` of `reader`'s scratch.
inline void deliver(Builder& b, int from, int reader, Range range) {
  const Slot src{from, Buffer::input, range};
  if (from == reader)
    b.copy(landing(reader, from, range.count), src);
  else
    b.put(src, landing(reader, from, range.count));
}

// reader's output [0, n) = slot 0 op slot 1 op ... op slot P-1 (rank order).
inline void fold_slots(Builder& b, int reader, std::size_t n) {
  Slot so_far = landing(reader, 0, n);
  for (int k = 1; k < b.ranks(); ++k) {
    const Slot output{reader, Buffer::output, {0, n}};
    b.reduce(output, so_far, landing(reader, k, n));
    so_far = output;
  }
}

}  // namespace earlybird::coll::detail
