// reduce_scatter_inline_flags — for small inputs on one node: block r of
// every rank's input goes to rank r, which folds the P of them in rank order.
//
// Cost (Hockney, m bytes = one rank's input, P blocks): alpha +
// ((P-1)/P)(beta + gamma) m per rank in one round.
//   every rank: P-1 puts of count elements, (P-1) count reduced; rounds 1.
//
// Where every rank's window is directly reachable and m <= 2240 bytes the
// runtime runs this on data-carrying flag lines, rank r reading block r of
// every rank's (runtime/src/exec/inline_collective.hpp); elsewhere the
// schedule below (puts into scratch slot k: schedule/published.hpp).
//
// Limitations: none on the operator (rank order). Scratch: P count per rank.
//
// State for P = 4 (rank r's output, block r):
//   deliver     rank r's slots 0..3 hold block r of {0}, {1}, {2}, {3}
//   fold        {0,1} -> {0-2} -> {0-3}
#include "../schedule/build_schedule.hpp"
#include "../schedule/published.hpp"

#include <earlybird/collectives/reduce_scatter.hpp>

namespace earlybird::coll {

Schedule reduce_scatter_inline_flags(int ranks, std::size_t count) {
  return detail::build_schedule("reduce_scatter_inline_flags", Collective::reduce_scatter, ranks, count,
                                [&](Builder& b) {
    if (ranks == 1) {
      b.copy({0, Buffer::output, {0, count}}, {0, Buffer::input, {0, count}});
      return;
    }
    for (int from = 0; from < ranks; ++from)
      for (int reader = 0; reader < ranks; ++reader)
        detail::deliver(b, from, reader, {static_cast<std::size_t>(reader) * count, count});
    for (int r = 0; r < ranks; ++r) detail::fold_slots(b, r, count);
  });
}

}  // namespace earlybird::coll
