// Reduction trees and the phase that reduces along one (reduce_tree.hpp).
#include "reduce_tree.hpp"

#include <earlybird/collectives/partition.hpp>

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace earlybird::coll::detail {
namespace {

std::size_t as_index(int rank) { return static_cast<std::size_t>(rank); }

// Rank r's children's bits lie below this one.
int child_span(int rank, int ranks) {
  if (rank == 0) return ranks <= 1 ? 1 : 2 * floor_pow2(ranks - 1);
  return rank & -rank;
}

// Where `rank` keeps its partial of `seg` once its children are folded in.
Slot partial_of(const ReduceTree& tree, int rank, Range seg) {
  if (rank == 0) return {0, Buffer::output, seg};
  if (tree.children[as_index(rank)].empty()) return {rank, Buffer::input, seg};
  return {rank, Buffer::scratch, seg};  // slot 0
}

// Rank r pulls in its children's partials of `seg`, in rank order.
void fold_children(Builder& b, const ReduceTree& tree, int rank, Range seg) {
  const auto& children = tree.children[as_index(rank)];
  const Slot acc = partial_of(tree, rank, seg);
  for (std::size_t k = 0; k < children.size(); ++k) {
    const Slot landing{rank, Buffer::scratch, {k * b.count() + seg.begin, seg.count}};
    b.put(partial_of(tree, children[k], seg), landing);
    const Slot mine = k == 0 ? Slot{rank, Buffer::input, seg} : acc;
    b.reduce(acc, mine, landing);
  }
}

}  // namespace

ReduceTree binomial_reduce_tree(int ranks) {
  ReduceTree tree;
  tree.children.resize(as_index(ranks));
  for (int r = 0; r < ranks; ++r)
    for (int step = 1; step < child_span(r, ranks) && r + step < ranks; step *= 2)
      tree.children[as_index(r)].push_back(r + step);
  return tree;
}

ReduceTree kary_reduce_tree(int ranks, int fanout) {
  if (fanout < 1) throw std::invalid_argument("kary_reduce_tree: fanout must be >= 1");
  ReduceTree tree;
  tree.children.resize(as_index(ranks));
  std::vector<std::pair<int, int>> subtrees{{0, ranks}};  // [root, end)
  while (!subtrees.empty()) {
    const auto [root, end] = subtrees.back();
    subtrees.pop_back();
    const int rest = end - root - 1;
    const int parts = std::min(fanout, rest);
    int begin = root + 1;
    for (int i = 0; i < parts; ++i) {
      const int size = rest / parts + (i < rest % parts ? 1 : 0);
      tree.children[as_index(root)].push_back(begin);
      subtrees.emplace_back(begin, begin + size);
      begin += size;
    }
  }
  return tree;
}

void tree_reduce_phase(Builder& b, const ReduceTree& tree, std::size_t segment_elems) {
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

}  // namespace earlybird::coll::detail
