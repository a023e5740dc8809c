// Internal: the trees rooted at rank 0 that the broadcasts send down and the
// reduces fold up (bcast/tree_bcast.cpp, reduce/tree_reduce.cpp; the binomial
// tree also drives bcast_scatter_allgather's scatter).
//
// Every tree numbers each child above its parent and lists a node's children
// in rank order. Visiting ranks upwards therefore meets every parent before
// its children (the order a broadcast forwards in), downwards every child
// before its parent (the order a reduce folds in). A broadcast that serves
// its children in another order names it with ChildOrder.
#pragma once

#include <vector>

namespace earlybird::coll::detail {

struct Tree {
  // children[r]: rank r's children, in rank order, each numbered above r.
  std::vector<std::vector<int>> children;

  const std::vector<int>& children_of(int rank) const { return children[static_cast<std::size_t>(rank)]; }
};

// The order a node serves its children in.
enum class ChildOrder {
  rank_order,          // lowest rank first
  highest_rank_first,  // in a binomial tree: the largest subtree first
};
std::vector<int> children_in(const Tree& tree, int rank, ChildOrder order);

// The binomial tree with contiguous subtrees (MPICH's): rank r != 0 has
// parent r - lowbit(r) and children r + 2^j for every 2^j < lowbit(r) (for
// rank 0: every 2^j < P); rank r's subtree is the run of ranks
// [r, binomial_subtree_end(r, P)). A rank's depth is the number of set bits
// in it. For P = 8:
//
//   0 ─┬─ 1
//      ├─ 2 ── 3
//      └─ 4 ─┬─ 5
//            └─ 6 ── 7
Tree binomial_tree(int ranks);
int binomial_subtree_end(int rank, int ranks);

// The balanced preorder tree of fan-out k: a node's other subtree ranks are
// split into min(k, rest) runs, sizes differing by at most one, larger runs
// first; every subtree is a run of ranks starting at its root. k = 1 is the
// chain 0 - 1 - ... - P-1. Depth: the least d with 1 + k + ... + k^d >= P.
// Throws std::invalid_argument for k < 1. For P = 7, k = 2:
//
//   0 ─┬─ 1 ─┬─ 2
//      │     └─ 3
//      └─ 4 ─┬─ 5
//            └─ 6
Tree kary_tree(int ranks, int fanout);

// The binomial tree of the nodes' first ranks (node leaders), each leader
// then the root of its node's binomial tree: over nodes of n consecutive
// ranks (n = node_ranks dividing P; else one node: binomial_tree(P)), rank
// k n + i has the children k n + i + 2^j (2^j < lowbit(i), inside the
// node; for i = 0 every 2^j < n) and, when i = 0, the leaders (k + 2^j) n
// of the leaders' binomial tree. Every subtree is still a run of ranks from
// its root (a leader's covers its node and its leader subtree's nodes),
// and only N - 1 edges join different nodes. For P = 6, n = 3:
//
//   0 ─┬─ 1
//      ├─ 2
//      └─ 3 ─┬─ 4
//            └─ 5
Tree node_binomial_tree(int ranks, int node_ranks);

// The complete binary tree in heap order: rank r has children 2r+1 and 2r+2
// (those below P); its height is floor(log2 P). For P = 7:
//
//   0 ─┬─ 1 ─┬─ 3
//      │     └─ 4
//      └─ 2 ─┬─ 5
//            └─ 6
Tree heap_binary_tree(int ranks);

}  // namespace earlybird::coll::detail
