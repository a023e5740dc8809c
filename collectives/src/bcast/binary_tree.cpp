// bcast_binary_tree — pipelined broadcast down a complete binary tree (rank r
// has children 2r+1 and 2r+2): per segment, a rank sends to its left child,
// then to its right child, as soon as it holds the segment.
//
// Cost (Hockney, m bytes, segments of ms bytes, q = ceil(m/ms),
// h = ceil(log2(P+1)) - 1 the tree's height):
//   2(h + q - 1)(alpha + beta ms) along the rightmost path (each inner rank
//   sends every segment twice, so a segment reaches a right child two steps
//   after its parent got it);
//   per rank: q puts and `count` elements per child (0, 1 or 2 children);
//   rounds (dependency depth) h = floor(log2 P).
// Half the chain's pipeline throughput, but only h + q - 1 stages deep, so it
// wins for large P and medium vectors.
//
// Limitations: one scratch vector per non-root rank (segments at their own
// offsets, forwarded from there, never reused: no acknowledgement flags);
// non-root ranks never read their input. segment_elems = 0: one segment.
//
// State for P = 4 (tree 0 -> {1, 2}, 1 -> {3}), one segment:
//   step    sends           holders
//   1       0->1            0, 1
//   2       0->2, 1->3      0, 1, 2, 3
#include "bcast_phases.hpp"
#include "trees.hpp"

#include <earlybird/collectives/bcast.hpp>

namespace earlybird::coll {
namespace detail {
namespace {

Tree heap_tree(int ranks) {
  Tree tree{std::vector<std::vector<int>>(static_cast<std::size_t>(ranks))};
  for (int r = 0; r < ranks; ++r)
    for (const int child : {2 * r + 1, 2 * r + 2})
      if (child < ranks) tree.children[static_cast<std::size_t>(r)].push_back(child);
  return tree;
}

}  // namespace

void bcast_binary_tree_phase(Builder& b, Buffer source, std::size_t segment_elems) {
  tree_bcast_phase(b, source, heap_tree(b.ranks()), segment_elems);
}

}  // namespace detail

Schedule bcast_binary_tree(int ranks, std::size_t count, std::size_t segment_elems) {
  Builder b("bcast_binary_tree", ranks, count);
  detail::bcast_binary_tree_phase(b, Buffer::input, segment_elems);
  return std::move(b).finish();
}

}  // namespace earlybird::coll
