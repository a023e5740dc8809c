// reduce_binomial — reduce to rank 0 over a binomial tree, whole vector per
// transfer: in round j every rank whose lowest set bit is 2^j sends its
// partial to rank - 2^j.
//
// Cost (Hockney, m bytes per rank): ceil(log2 P)(alpha + beta m + gamma m).
//   per rank r != 0: 1 put of `count` elements; rank r reduces
//   children(r) * count elements, children(r) = #{j : 2^j < lowbit(r),
//   r + 2^j < P} (rank 0: ceil(log2 P)). The root receives ceil(log2 P)
//   vectors one after another (single port); the dependency depth that
//   schedule_stats reports as rounds is floor(log2 P) (P = 5: 4 -> 0 runs
//   beside 1 -> 0 and 3 -> 2).
// Best when alpha dominates (small vectors); the root receives log2 P whole
// vectors, so pipelined trees win for large ones.
//
// Limitations:
//   - keeps rank order: a rank folds its subtree [r, r + lowbit(r)) as
//     input op child 1 op child 2 op child 4 ..., each child holding the next
//     contiguous run; non-commutative operators are fine.
//   - scratch: one vector per child, never reused (no acknowledgement flags):
//     ceil(log2 P) * count on rank 0; vectors larger than the window run in
//     batches (runtime). Non-root outputs are never written.
//
// State for P = 4 (partial each rank holds after the round; "s" = scratch):
//   round   rank 0       rank 1     rank 2       rank 3
//   start   {0}          {1}        {2}          {3}
//   j=0     out {0,1}    sent       s {2,3}      sent      (1 -> 0, 3 -> 2)
//   j=1     out {0-3}    -          sent         -         (2 -> 0)
#include "reduce_phases.hpp"
#include "reduce_tree.hpp"

#include <earlybird/collectives/reduce.hpp>

namespace earlybird::coll {
namespace detail {

void reduce_binomial_phase(Builder& b) { tree_reduce_phase(b, binomial_reduce_tree(b.ranks()), 0); }

}  // namespace detail

Schedule reduce_binomial(int ranks, std::size_t count) {
  Builder b("reduce_binomial", ranks, count, shape_of(Collective::reduce, ranks, count));
  detail::reduce_binomial_phase(b);
  return std::move(b).finish();
}

}  // namespace earlybird::coll
