// reduce_kary_tree — pipelined reduce over a balanced k-ary tree in preorder:
// a node folds in its children's partials in rank order, segment by segment,
// and sends the result to its parent.
//
// Cost (Hockney, q = ceil(m / ms) segments, depth d = the least d with
// 1 + k + ... + k^d >= P): unidirectional model (T1 + (k+1)(q-1))(alpha +
// beta ms + gamma ms) once a non-root node has k children: its port takes k
// segments in and one out per segment; T1 <= k d is the time of one segment.
// Larger k: fewer levels, a slower pipeline.
//   per rank r != 0: q puts, `count` elements sent; rank r reduces
//   children(r) * count elements (children <= k); rounds d.
//
// Limitations:
//   - keeps rank order (preorder runs, children folded in rank order);
//     non-commutative operators are fine.
//   - scratch: one vector per child (at most k * count), never reused.
//   - fanout >= 1 (1 is the chain, 2 the binary tree); segment_elems = 0
//     means one segment.
//
// State for P = 4, k = 4 (rank 0 has children 1, 2, 3), one segment:
//   round   rank 0       rank 1   rank 2   rank 3
//   1       out {0,1}    sent     sent     sent      (all three put at once)
//   1'      out {0-2}    -        -        -         (folded in rank order)
//   1''     out {0-3}    -        -        -
#include "reduce_phases.hpp"
#include "reduce_tree.hpp"

#include <earlybird/collectives/reduce.hpp>

namespace earlybird::coll {
namespace detail {

void reduce_kary_tree_phase(Builder& b, int fanout, std::size_t segment_elems) {
  tree_reduce_phase(b, kary_reduce_tree(b.ranks(), fanout), segment_elems);
}

}  // namespace detail

Schedule reduce_kary_tree(int ranks, std::size_t count, int fanout, std::size_t segment_elems) {
  Builder b("reduce_kary_tree", ranks, count, shape_of(Collective::reduce, ranks, count));
  detail::reduce_kary_tree_phase(b, fanout, segment_elems);
  return std::move(b).finish();
}

}  // namespace earlybird::coll
