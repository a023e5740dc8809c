// The tree reduces — reduce_binomial, reduce_chain, reduce_binary_tree,
// reduce_kary_tree, reduce_hierarchical: every rank's input is folded up a tree to rank 0
// (../topology/tree.hpp), per segment of at most `segment_elems` elements (0:
// one segment; binomial always sends one). Rank r receives child k's partial
// into scratch slot k (elements [k*count, (k+1)*count), at the segment's own
// offset) and folds it in: the first child as slot0 = input op slot0 (rank 0:
// output = input op slot0), later ones as acc = acc op slot k. A rank with
// children sends slot 0, a leaf its input. P = 1: output = input.
//
// Limitations (all four):
//   - keep rank order: every subtree is a run of ranks starting at its root,
//     and a node folds its own input, then its children's partials in rank
//     order, so it computes the rank-order fold of its run; non-commutative
//     operators are fine.
//   - scratch: one vector per child (slot k for child k), never reused (no
//     acknowledgement flags); vectors larger than the window run in batches
//     (runtime). Non-root outputs are never written.
//
// reduce_binomial — the binomial tree, whole vector per transfer: in round j
// every rank whose lowest set bit is 2^j sends its partial to rank - 2^j.
//   Cost (Hockney, m bytes per rank): ceil(log2 P)(alpha + beta m + gamma m).
//   per rank r != 0: 1 put of `count` elements; rank r reduces
//   children(r) * count elements, children(r) = #{j : 2^j < lowbit(r),
//   r + 2^j < P} (rank 0: ceil(log2 P)). The root receives ceil(log2 P)
//   vectors one after another (single port); the dependency depth that
//   schedule_stats reports as rounds is floor(log2 P) (P = 5: 4 -> 0 runs
//   beside 1 -> 0 and 3 -> 2).
//   Best when alpha dominates (small vectors); the root receives log2 P whole
//   vectors, so pipelined trees win for large ones. Scratch: ceil(log2 P) *
//   count on rank 0.
//   State for P = 4 (partial each rank holds after the round; "s" = scratch):
//     round   rank 0       rank 1     rank 2       rank 3
//     start   {0}          {1}        {2}          {3}
//     j=0     out {0,1}    sent       s {2,3}      sent      (1 -> 0, 3 -> 2)
//     j=1     out {0-3}    -          sent         -         (2 -> 0)
//
// reduce_kary_tree — the balanced preorder k-ary tree, pipelined: a node folds
// in its children's partials in rank order, segment by segment, and sends the
// result to its parent. fanout >= 1 (1 is the chain, 2 the binary tree).
//   Cost (Hockney, q = ceil(m / ms) segments, depth d = the least d with
//   1 + k + ... + k^d >= P): unidirectional model (T1 + (k+1)(q-1))(alpha +
//   beta ms + gamma ms) once a non-root node has k children: its port takes k
//   segments in and one out per segment; T1 <= k d is the time of one
//   segment. Larger k: fewer levels, a slower pipeline.
//   per rank r != 0: q puts, `count` elements sent; rank r reduces
//   children(r) * count elements (children <= k); rounds d. Scratch: at most
//   k * count.
//   State for P = 4, k = 4 (rank 0 has children 1, 2, 3), one segment:
//     round   rank 0       rank 1   rank 2   rank 3
//     1       out {0,1}    sent     sent     sent      (all three put at once)
//     1'      out {0-2}    -        -        -         (folded in rank order)
//     1''     out {0-3}    -        -        -
//
// reduce_chain — the k-ary tree of k = 1: every segment flows P-1 -> P-2 ->
// ... -> 0, each rank folding its own input in on the way.
//   Cost (Hockney, q = ceil(m / ms) segments): under the unidirectional model
//   (a rank sends or receives, not both at once) ((P-1) + 2(q-1))(alpha +
//   beta ms + gamma ms): the first segment needs P-1 hops, then a new one
//   reaches the root every second step.
//   per rank r != 0: q puts, `count` elements sent; ranks 0..P-2 reduce
//   `count` elements, rank P-1 none; rounds (dependency depth) P-1. Scratch:
//   one vector on every rank but P-1.
//   Good for large vectors at small P; the P-1 latency terms lose to trees as
//   P grows.
//   State for P = 4, two segments a, b ("s" = scratch; the dependency DAG
//   lets segment b start as soon as rank 3 has sent a):
//     stage   rank 0        rank 1        rank 2        rank 3
//     1       -             -             s a{2,3}      sent a
//     2       -             s a{1-3}      sent a        -
//     3       out a{0-3}    sent a        s b{2,3}      sent b
//     4       -             s b{1-3}      sent b        -
//     5       out b{0-3}    sent b        -             -
//
// reduce_binary_tree — the k-ary tree of k = 2: a node receives its left
// child's partial, folds it in, then its right child's, and sends the result
// to its parent, segment by segment.
//   Cost (Hockney, q = ceil(m / ms) segments, depth d = ceil(log2(P+1)) - 1):
//   unidirectional model (T1 + 3(q-1))(alpha + beta ms + gamma ms) for P >= 6
//   (period 2 for P = 3..5): an inner node's port takes two segments in and
//   one out per segment; T1 <= 2d is the time of one segment.
//   per rank r != 0: q puts, `count` elements sent; rank r reduces
//   children(r) * count elements (children: 0, 1 or 2); rounds d. Scratch:
//   at most 2 * count.
//   Tree for P = 4: 0 has children 1 (with child 2) and 3.
//   State for P = 4, one segment ("s" = scratch):
//     round   rank 0        rank 1       rank 2    rank 3
//     1       -             s {1,2}      sent      -          (2 -> 1)
//     2       out {0-2}     sent         -         -          (1 -> 0, left)
//     2'      out {0-3}     -            -         sent       (3 -> 0, right)
//   (3 -> 0 may arrive first; rank 0 folds it in only after the left child.)
//
// reduce_hierarchical — for ranks on several nodes of n consecutive ranks
// (N = P / n): bcast_hierarchical's tree (node_binomial_tree) folded up,
// per segment: each node's binomial tree into its leader (rank k n), then
// the leaders' binomial tree into rank 0. Every subtree is a run of ranks
// from its root, so rank order holds (non-commutative operators are fine).
//   Cost (Hockney, q segments of ms bytes; network a, b; node a_n, b_n):
//   one segment takes ceil(log2 n)(a_n + b_n ms + gamma ms) +
//   ceil(log2 N)(a + b ms + gamma ms) up the deepest path; N - 1 crossings.
//   The binomial tree for powers of two n and N; fewer crossings when n is
//   not one. n must divide P (else, or n = 0, 1 or P: the binomial tree).
//   Scratch: one vector per child, as the other trees.
//   State for P = 4, n = 2: reduce_binomial's (the same tree). For P = 6,
//   n = 3 (tree 0 -> {1, 2, 3}, 3 -> {4, 5}):
//     round   rank 0          rank 3          (others)
//     1       out {0,1}       s {3,4}         1, 4 sent
//     2       out {0-2}       s {3-5}         2, 5 sent
//     3       out {0-5}       sent            (3 -> 0 across the nodes)
#include "reduce_phases.hpp"

#include "../schedule/build_schedule.hpp"
#include "../topology/tree.hpp"

#include <earlybird/collectives/partition.hpp>
#include <earlybird/collectives/reduce.hpp>

namespace earlybird::coll {
namespace detail {
namespace {

// Where `rank` keeps its partial of `seg` once its children are folded in.
Slot partial_of(const Tree& tree, int rank, Range seg) {
  if (rank == 0) return {0, Buffer::output, seg};
  if (tree.children_of(rank).empty()) return {rank, Buffer::input, seg};
  return {rank, Buffer::scratch, seg};  // slot 0
}

// Rank r pulls in its children's partials of `seg`, in rank order.
void fold_children(Builder& b, const Tree& tree, int rank, Range seg) {
  const auto& children = tree.children_of(rank);
  const Slot acc = partial_of(tree, rank, seg);
  for (std::size_t k = 0; k < children.size(); ++k) {
    const Slot landing{rank, Buffer::scratch, {k * b.count() + seg.begin, seg.count}};
    b.put(partial_of(tree, children[k], seg), landing);
    const Slot mine = k == 0 ? Slot{rank, Buffer::input, seg} : acc;
    b.reduce(acc, mine, landing);
  }
}

void tree_reduce_phase(Builder& b, const Tree& tree, std::size_t segment_elems) {
  const int p = b.ranks();
  if (p == 1) {
    b.copy({0, Buffer::output, {0, b.count()}}, {0, Buffer::input, {0, b.count()}});
    return;
  }
  // Children are numbered above their parent: going down from P-1 folds
  // every child before its partial is sent.
  for (const Range seg : segments({0, b.count()}, segment_elems))
    for (int r = p - 1; r >= 0; --r) fold_children(b, tree, r, seg);
}

}  // namespace

void reduce_binomial_phase(Builder& b) { tree_reduce_phase(b, binomial_tree(b.ranks()), 0); }

void reduce_kary_tree_phase(Builder& b, int fanout, std::size_t segment_elems) {
  tree_reduce_phase(b, kary_tree(b.ranks(), fanout), segment_elems);
}

void reduce_chain_phase(Builder& b, std::size_t segment_elems) { reduce_kary_tree_phase(b, 1, segment_elems); }

void reduce_binary_tree_phase(Builder& b, std::size_t segment_elems) { reduce_kary_tree_phase(b, 2, segment_elems); }

void reduce_hierarchical_phase(Builder& b, int node_ranks, std::size_t segment_elems) {
  tree_reduce_phase(b, node_binomial_tree(b.ranks(), node_ranks), segment_elems);
}

}  // namespace detail

Schedule reduce_binomial(int ranks, std::size_t count) {
  return detail::build_schedule("reduce_binomial", Collective::reduce, ranks, count, detail::reduce_binomial_phase);
}

Schedule reduce_kary_tree(int ranks, std::size_t count, int fanout, std::size_t segment_elems) {
  return detail::build_schedule("reduce_kary_tree", Collective::reduce, ranks, count,
                                [=](Builder& b) { detail::reduce_kary_tree_phase(b, fanout, segment_elems); });
}

Schedule reduce_chain(int ranks, std::size_t count, std::size_t segment_elems) {
  return detail::build_schedule("reduce_chain", Collective::reduce, ranks, count,
                                [=](Builder& b) { detail::reduce_chain_phase(b, segment_elems); });
}

Schedule reduce_hierarchical(int ranks, std::size_t count, int node_ranks, std::size_t segment_elems) {
  return detail::build_schedule("reduce_hierarchical", Collective::reduce, ranks, count,
                                [=](Builder& b) { detail::reduce_hierarchical_phase(b, node_ranks, segment_elems); });
}

Schedule reduce_binary_tree(int ranks, std::size_t count, std::size_t segment_elems) {
  return detail::build_schedule("reduce_binary_tree", Collective::reduce, ranks, count,
                                [=](Builder& b) { detail::reduce_binary_tree_phase(b, segment_elems); });
}

}  // namespace earlybird::coll
