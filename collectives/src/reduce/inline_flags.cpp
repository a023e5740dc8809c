// reduce_inline_flags — for small vectors on one node: every rank's vector
// goes to the root, which folds all P in rank order.
//
// Cost (Hockney, m bytes per rank): alpha + (P-1)(beta m + gamma m) at the
// root in one round (its port takes P-1 vectors).
//   root: (P-1) count reduced; others: 1 put of count elements; rounds 1.
//
// Where every rank's window is directly reachable and m <= 2240 bytes the
// runtime runs this on data-carrying flag lines, the root reading every
// rank's lines (runtime/src/exec/inline_collective.hpp); elsewhere the
// schedule below (puts into the root's scratch slots: schedule/published.hpp).
//
// Limitations: none on the operator (rank order). Scratch: P count at the
// root. Non-root outputs are never written.
//
// State for P = 4 (root 0's output):
//   deliver     the root's slots 0..3 hold {0}, {1}, {2}, {3}
//   fold        {0,1} -> {0-2} -> {0-3}
#include "../schedule/build_schedule.hpp"
#include "../schedule/published.hpp"

#include <earlybird/collectives/reduce.hpp>

namespace earlybird::coll {

Schedule reduce_inline_flags(int ranks, std::size_t count) {
  return detail::build_schedule("reduce_inline_flags", Collective::reduce, ranks, count, [&](Builder& b) {
    if (ranks == 1) {
      b.copy({0, Buffer::output, {0, count}}, {0, Buffer::input, {0, count}});
      return;
    }
    for (int from = 0; from < ranks; ++from) detail::deliver(b, from, 0, {0, count});
    detail::fold_slots(b, 0, count);
  });
}

}  // namespace earlybird::coll
