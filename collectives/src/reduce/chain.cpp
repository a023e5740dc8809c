// reduce_chain — pipelined chain: every segment flows P-1 -> P-2 -> ... -> 0,
// each rank folding its own input in on the way.
//
// Cost (Hockney, q = ceil(m / ms) segments): under the unidirectional model (a
// rank sends or receives, not both at once) ((P-1) + 2(q-1))(alpha + beta ms +
// gamma ms): the first segment needs P-1 hops, then a new one reaches the
// root every second step.
//   per rank r != 0: q puts, `count` elements sent; ranks 0..P-2 reduce
//   `count` elements, rank P-1 none; rounds (dependency depth) P-1.
// Good for large vectors at small P; the P-1 latency terms lose to trees as P
// grows.
//
// Limitations:
//   - keeps rank order: rank r computes input(r) op partial(r+1..P-1);
//     non-commutative operators are fine.
//   - scratch: one vector on every rank but P-1 (segments at their own
//     offsets, never reused, so no acknowledgement flags).
//   - segment_elems = 0 means one segment (no pipelining).
//
// State for P = 4, two segments a, b ("s" = scratch; the dependency DAG lets
// segment b start as soon as rank 3 has sent a):
//   stage   rank 0        rank 1        rank 2        rank 3
//   1       -             -             s a{2,3}      sent a
//   2       -             s a{1-3}      sent a        -
//   3       out a{0-3}    sent a        s b{2,3}      sent b
//   4       -             s b{1-3}      sent b        -
//   5       out b{0-3}    sent b        -             -
#include "reduce_phases.hpp"
#include "reduce_tree.hpp"

#include <earlybird/collectives/reduce.hpp>

namespace earlybird::coll {
namespace detail {

void reduce_chain_phase(Builder& b, std::size_t segment_elems) {
  tree_reduce_phase(b, kary_reduce_tree(b.ranks(), 1), segment_elems);
}

}  // namespace detail

Schedule reduce_chain(int ranks, std::size_t count, std::size_t segment_elems) {
  Builder b("reduce_chain", ranks, count, shape_of(Collective::reduce, ranks, count));
  detail::reduce_chain_phase(b, segment_elems);
  return std::move(b).finish();
}

}  // namespace earlybird::coll
