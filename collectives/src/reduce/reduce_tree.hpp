// Internal: reduction trees rooted at rank 0 and the phase that reduces along
// one, shared by the binomial, chain, binary-tree and k-ary-tree reduces.
//
// Every tree here is in preorder: a subtree is a contiguous run of ranks that
// starts at its root, and a node lists its children in rank order. A node
// that combines its own input with its children's partials in that order
// computes the rank-order fold of its run, so these reduces keep rank order
// (non-commutative operators are fine).
#pragma once

#include <earlybird/collectives/builder.hpp>

#include <cstddef>
#include <vector>

namespace earlybird::coll::detail {

struct ReduceTree {
  // children[r]: rank r's children in rank order (each above r).
  std::vector<std::vector<int>> children;
};

// Binomial tree: rank r's children are r + 2^j for every 2^j below r's lowest
// set bit (below P for rank 0), smallest first; rank r sends in round
// lowbit index of r. For P = 8:
//
//   0 ─┬─ 1
//      ├─ 2 ── 3
//      └─ 4 ─┬─ 5
//            └─ 6 ── 7
ReduceTree binomial_reduce_tree(int ranks);

// Balanced preorder tree of fan-out k: a node's other subtree ranks are split
// into min(k, rest) runs, sizes differing by at most one, larger runs first.
// k = 1 is the chain 0 <- 1 <- ... <- P-1; k = 2 the binary tree. Depth: the
// least d with 1 + k + ... + k^d >= P. For P = 7, k = 2:
//
//   0 ─┬─ 1 ─┬─ 2
//      │     └─ 3
//      └─ 4 ─┬─ 5
//            └─ 6
ReduceTree kary_reduce_tree(int ranks, int fanout);

// Appends the reduction of every rank's input into rank 0's output along
// `tree`, per segment of at most `segment_elems` elements (0: one segment).
// Rank r receives child k's partial into scratch slot k (elements
// [k*count, (k+1)*count), at the segment's own offset; never reused, so no
// acknowledgement flags) and folds it in: the first child as
// slot0 = input op slot0 (rank 0: output = input op slot0), later ones as
// acc = acc op slot k. A rank with children sends slot 0, a leaf its input.
// Non-root outputs are never written. P = 1: output = input.
void tree_reduce_phase(Builder& b, const ReduceTree& tree, std::size_t segment_elems);

}  // namespace earlybird::coll::detail
