// The tree broadcasts — bcast_binomial, bcast_chain, bcast_binary_tree,
// bcast_hierarchical: rank
// 0's vector travels down a tree (../topology/tree.hpp), per segment of at
// most `segment_elems` elements (0: one segment; binomial always sends one).
// Every rank puts what it holds into its children's scratch at the segment's
// own offsets; a child copies it into its output and forwards it from
// scratch, so a rank forwards a segment as soon as it has it.
//
// Limitations (all three): one scratch vector per non-root rank (segments at
// their own offsets, forwarded from there, never reused: no acknowledgement
// flags); non-root ranks never read their input; tiny segments cost a flag
// and a latency term each.
//
// bcast_binomial — the binomial tree, whole vector per transfer; a rank
// serves its children highest rank (largest subtree) first.
//   Cost (Hockney, m bytes): ceil(log2 P)(alpha + beta m) — the root sends
//   ceil(log2 P) times, each subtree then proceeds in parallel.
//   per rank r: one put of `count` elements per child (the root:
//   ceil(log2 P)); rounds (dependency depth) = max over r < P of the number
//   of set bits of r, which is log2 P for powers of two.
//   Best for small vectors; every hop moves the whole vector, so large
//   vectors want scatter_allgather or a pipelined chain.
//   State for P = 4 (tree 0 -> {1, 2}, 2 -> {3}, served 2 first; holders):
//     round   sends           holders
//     start   -               0
//     1       0->2            0, 2
//     2       0->1, 2->3      0, 1, 2, 3
//
// bcast_chain — the chain (the k-ary tree of k = 1): segment s goes 0 -> 1 ->
// ... -> P-1, so the chain carries up to P-1 segments at once.
//   Cost (Hockney, m bytes, segments of ms bytes, q = ceil(m/ms)):
//   (P - 1 + q - 1)(alpha + beta ms)
//   per rank r < P-1: q puts, `count` elements; rank P-1 sends nothing;
//   rounds (dependency depth) P - 1 whatever q (the pipelining shows in the
//   cost, not in the depth).
//   Bandwidth-optimal for large vectors (each rank receives and sends m
//   once); latency grows linearly in P.
//   State for P = 4, two segments s0, s1 (which segments each rank holds):
//     step    sends                 rank 0   rank 1   rank 2   rank 3
//     1       0->1 s0               s0 s1    s0       -        -
//     2       0->1 s1, 1->2 s0      s0 s1    s0 s1    s0       -
//     3       1->2 s1, 2->3 s0      s0 s1    s0 s1    s0 s1    s0
//     4       2->3 s1               s0 s1    s0 s1    s0 s1    s0 s1
//
// bcast_binary_tree — the complete binary tree in heap order (rank r has
// children 2r+1 and 2r+2): per segment, a rank sends to its left child, then
// to its right child.
//   Cost (Hockney, m bytes, segments of ms bytes, q = ceil(m/ms),
//   h = ceil(log2(P+1)) - 1 the tree's height):
//   2(h + q - 1)(alpha + beta ms) along the rightmost path (each inner rank
//   sends every segment twice, so a segment reaches a right child two steps
//   after its parent got it);
//   per rank: q puts and `count` elements per child (0, 1 or 2 children);
//   rounds (dependency depth) h = floor(log2 P).
//   Half the chain's pipeline throughput, but only h + q - 1 stages deep, so
//   it wins for large P and medium vectors.
//   State for P = 4 (tree 0 -> {1, 2}, 1 -> {3}), one segment:
//     step    sends           holders
//     1       0->1            0, 1
//     2       0->2, 1->3      0, 1, 2, 3
//
// bcast_hierarchical — for ranks on several nodes of n consecutive ranks
// (N = P / n nodes): the binomial tree of the node leaders (ranks k n), each
// leader then the root of its node's binomial tree (node_binomial_tree),
// per segment; a rank serves the other nodes first (highest rank first).
//   Cost (Hockney, m bytes, q segments of ms bytes; network level a, b,
//   node level a_n, b_n): one segment takes ceil(log2 N)(a + b ms) +
//   ceil(log2 n)(a_n + b_n ms) down the deepest path; every node's link
//   carries the message once in (the root's: ceil(log2 N) times out), N - 1
//   crossings in all.
//   For powers of two n and N the tree is bcast_binomial's; it differs, and
//   crosses fewer times, when n is not one (P = 6, n = 3: one crossing, the
//   binomial two; P = 12, n = 6: one against two). n must divide P (else,
//   or n = 0, 1 or P: the binomial tree).
//   State for P = 4, n = 2: bcast_binomial's (the same tree). For P = 6,
//   n = 3 (tree 0 -> {1, 2, 3}, 3 -> {4, 5}; holders):
//     round   sends           holders
//     1       0->3            0, 3           (across the nodes first)
//     2       0->2, 3->5      0, 2, 3, 5
//     3       0->1, 3->4      all
#include "bcast_phases.hpp"

#include "../topology/tree.hpp"

#include <earlybird/collectives/bcast.hpp>
#include <earlybird/collectives/partition.hpp>

#include <numeric>
#include <vector>

namespace earlybird::coll {
namespace detail {
namespace {

// The identity relabelling: node i of a tree is rank i.
std::vector<int> identity(int ranks) {
  std::vector<int> ranks_of(static_cast<std::size_t>(ranks));
  std::iota(ranks_of.begin(), ranks_of.end(), 0);
  return ranks_of;
}

// Broadcasts rank 0's `source` down `tree`, each rank serving its children in
// `order`, then copies rank 0's own output (copy_root_output).
void tree_bcast_phase(Builder& b, Buffer source, const Tree& tree, ChildOrder order, std::size_t segment_elems) {
  relabelled_tree_bcast_phase(b, source, tree, order, segment_elems, identity(b.ranks()));
  copy_root_output(b, source);
}

}  // namespace

void bcast_binomial_phase(Builder& b, Buffer source) {
  tree_bcast_phase(b, source, binomial_tree(b.ranks()), ChildOrder::highest_rank_first, 0);
}

void bcast_chain_phase(Builder& b, Buffer source, std::size_t segment_elems) {
  tree_bcast_phase(b, source, kary_tree(b.ranks(), 1), ChildOrder::rank_order, segment_elems);
}

void bcast_hierarchical_phase(Builder& b, Buffer source, int node_ranks, std::size_t segment_elems) {
  tree_bcast_phase(b, source, node_binomial_tree(b.ranks(), node_ranks), ChildOrder::highest_rank_first,
                   segment_elems);
}

void bcast_binary_tree_phase(Builder& b, Buffer source, std::size_t segment_elems) {
  tree_bcast_phase(b, source, heap_binary_tree(b.ranks()), ChildOrder::rank_order, segment_elems);
}

void relabelled_tree_bcast_phase(Builder& b, Buffer source, const Tree& tree, ChildOrder order,
                                 std::size_t segment_elems, std::span<const int> rank_of_node) {
  const auto rank = [&](int node) { return rank_of_node[static_cast<std::size_t>(node)]; };
  for (const Range seg : segments({0, b.count()}, segment_elems)) {
    for (int node = 0; node < static_cast<int>(rank_of_node.size()); ++node) {
      const Slot held = node == 0 ? Slot{rank(0), source, seg} : Slot{rank(node), Buffer::scratch, seg};
      for (const int child : children_in(tree, node, order)) {
        const Slot landing{rank(child), Buffer::scratch, seg};
        b.put(held, landing);
        b.copy({rank(child), Buffer::output, seg}, landing);
      }
    }
  }
}

void copy_root_output(Builder& b, Buffer source) {
  if (source == Buffer::input) b.copy({0, Buffer::output, {0, b.count()}}, {0, Buffer::input, {0, b.count()}});
}

}  // namespace detail

Schedule bcast_binomial(int ranks, std::size_t count) {
  return detail::bcast_schedule("bcast_binomial", ranks, count, detail::bcast_binomial_phase);
}

Schedule bcast_chain(int ranks, std::size_t count, std::size_t segment_elems) {
  return detail::bcast_schedule("bcast_chain", ranks, count, [segment_elems](Builder& b, Buffer source) {
    detail::bcast_chain_phase(b, source, segment_elems);
  });
}

Schedule bcast_hierarchical(int ranks, std::size_t count, int node_ranks, std::size_t segment_elems) {
  return detail::bcast_schedule("bcast_hierarchical", ranks, count, [=](Builder& b, Buffer source) {
    detail::bcast_hierarchical_phase(b, source, node_ranks, segment_elems);
  });
}

Schedule bcast_binary_tree(int ranks, std::size_t count, std::size_t segment_elems) {
  return detail::bcast_schedule("bcast_binary_tree", ranks, count, [segment_elems](Builder& b, Buffer source) {
    detail::bcast_binary_tree_phase(b, source, segment_elems);
  });
}

}  // namespace earlybird::coll
