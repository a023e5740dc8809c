// Internal: broadcast trees rooted at rank 0 and the phase that broadcasts
// along one, shared by the binomial, chain and binary-tree broadcasts (the
// binomial tree also drives scatter_allgather's scatter).
#pragma once

#include <earlybird/collectives/builder.hpp>

#include <cstddef>
#include <vector>

namespace earlybird::coll::detail {

// children[r]: rank r's children in the order r sends to them. Every child is
// numbered above its parent, so visiting ranks in increasing order visits
// each parent before its children.
struct Tree {
  std::vector<std::vector<int>> children;
};

// The binomial tree with contiguous subtrees (MPICH's): rank r != 0 has
// parent r - lowbit(r) and children r + 2^j for 2^j < lowbit(r), the largest
// subtree first; rank r's subtree is ranks [r, binomial_subtree_end(r, P)).
// For P = 8:
//
//   0 ─┬─ 4 ─┬─ 6 ── 7
//      │     └─ 5
//      ├─ 2 ── 3
//      └─ 1
//
// A rank's depth is the number of set bits in it.
Tree binomial_tree(int ranks);
int binomial_subtree_end(int rank, int ranks);

// Appends a broadcast of rank 0's `source` along `tree`: per segment of at
// most `segment_elems` elements (0: one segment), every rank puts what it
// holds into its children's scratch at the segment's own offsets (scratch
// mirrors the vector, never reused, so no acknowledgement flags); a child
// copies it into its output and forwards it from scratch. Ends with
// copy_root_output().
void tree_bcast_phase(Builder& b, Buffer source, const Tree& tree, std::size_t segment_elems);

// Rank 0's output = its input when the source is its input (nothing when the
// source is already its output). Appended after rank 0's last read of input,
// so an in-place call (input aliases output) never reads overwritten input.
void copy_root_output(Builder& b, Buffer source);

}  // namespace earlybird::coll::detail
