// allreduce_inline_flags — for small vectors on one node: every rank gets
// every rank's vector and folds all P in rank order.
//
// Cost (Hockney, m bytes per rank): alpha + (P-1)(beta m + gamma m) per rank
// in one round: no rank waits on another's partial result, only on its
// input. Every rank moves (P-1) m and reduces (P-1) m, so it is for small m.
//   every rank: P-1 puts of count elements, (P-1) count reduced; rounds 1.
//
// Two executions, one result (docs/design.md, "The node path for small
// messages"): where the runtime can load and store every rank's window (a
// shared-memory window on one node) and m <= 2240 bytes, each rank writes its
// vector once into cache lines of its own window that carry the data and the
// sequence number together, and every rank reads them from there
// (runtime/src/exec/inline_collective.hpp: one line transfer per 56 bytes per
// peer, no flag apart from the data, which the IR cannot say). Elsewhere the
// executor runs the schedule below: every rank puts its vector into slot r
// of every other rank's scratch (schedule/published.hpp).
//
// Limitations: none on the operator (every rank folds in0 op in1 op ... in
// rank order, so every rank computes the same bits). Scratch: P count per
// rank (slot k: rank k's vector).
//
// State for P = 4 (sets of ranks held; any rank r's output):
//   deliver     slots 0..3 of every rank hold {0}, {1}, {2}, {3}
//   fold        {0,1} -> {0-2} -> {0-3} on every rank
#include "../schedule/published.hpp"

#include <earlybird/collectives/allreduce.hpp>
#include <earlybird/collectives/builder.hpp>

namespace earlybird::coll {

Schedule allreduce_inline_flags(int ranks, std::size_t count) {
  Builder b("allreduce_inline_flags", ranks, count);
  if (ranks > 1) {
    for (int from = 0; from < ranks; ++from)
      for (int reader = 0; reader < ranks; ++reader) detail::deliver(b, from, reader, {0, count});
    for (int r = 0; r < ranks; ++r) detail::fold_slots(b, r, count);
  }
  b.copy_unwritten_output();  // P = 1: output = input
  return std::move(b).finish();
}

}  // namespace earlybird::coll
