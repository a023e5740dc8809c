// reduce_binary_tree — pipelined reduce over a balanced binary tree in
// preorder: a node receives its left child's partial, folds it in, then its
// right child's, and sends the result to its parent, segment by segment.
//
// Cost (Hockney, q = ceil(m / ms) segments, depth d = ceil(log2(P+1)) - 1):
// unidirectional model (T1 + 3(q-1))(alpha + beta ms + gamma ms) for P >= 6
// (period 2 for P = 3..5): an inner node's port takes two segments in and one
// out per segment; T1 <= 2d is the time of one segment.
//   per rank r != 0: q puts, `count` elements sent; rank r reduces
//   children(r) * count elements (children: 0, 1 or 2); rounds d.
//
// Limitations:
//   - keeps rank order: node r's subtree is the run [r, r+L+R]; it computes
//     input(r) op left run op right run. Non-commutative operators are fine.
//   - scratch: one vector per child (at most 2 * count), never reused.
//   - segment_elems = 0 means one segment.
//
// Tree for P = 4: 0 has children 1 (with child 2) and 3.
// State for P = 4, one segment ("s" = scratch):
//   round   rank 0        rank 1       rank 2    rank 3
//   1       -             s {1,2}      sent      -          (2 -> 1)
//   2       out {0-2}     sent         -         -          (1 -> 0, left)
//   2'      out {0-3}     -            -         sent       (3 -> 0, right)
// (3 -> 0 may arrive first; rank 0 folds it in only after the left child.)
#include "reduce_phases.hpp"
#include "reduce_tree.hpp"

#include <earlybird/collectives/reduce.hpp>

namespace earlybird::coll {
namespace detail {

void reduce_binary_tree_phase(Builder& b, std::size_t segment_elems) {
  tree_reduce_phase(b, kary_reduce_tree(b.ranks(), 2), segment_elems);
}

}  // namespace detail

Schedule reduce_binary_tree(int ranks, std::size_t count, std::size_t segment_elems) {
  Builder b("reduce_binary_tree", ranks, count, shape_of(Collective::reduce, ranks, count));
  detail::reduce_binary_tree_phase(b, segment_elems);
  return std::move(b).finish();
}

}  // namespace earlybird::coll
