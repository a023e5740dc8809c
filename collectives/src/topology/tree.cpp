// The trees of tree.hpp.
#include "tree.hpp"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <stdexcept>
#include <utility>

namespace earlybird::coll::detail {
namespace {

Tree without_edges(int ranks) { return {std::vector<std::vector<int>>(static_cast<std::size_t>(ranks))}; }

void add_child(Tree& tree, int parent, int child) { tree.children[static_cast<std::size_t>(parent)].push_back(child); }

// Rank r's binomial subtree spans this many ranks from r (before clipping to P).
int binomial_span(int rank, int ranks) {
  if (rank == 0) return static_cast<int>(std::bit_ceil(static_cast<unsigned>(ranks)));
  return rank & -rank;
}

}  // namespace

std::vector<int> children_in(const Tree& tree, int rank, ChildOrder order) {
  std::vector<int> children = tree.children_of(rank);
  if (order == ChildOrder::highest_rank_first) std::reverse(children.begin(), children.end());
  return children;
}

Tree binomial_tree(int ranks) {
  Tree tree = without_edges(ranks);
  for (int r = 0; r < ranks; ++r)
    for (int step = 1; step < binomial_span(r, ranks) && r + step < ranks; step *= 2) add_child(tree, r, r + step);
  return tree;
}

int binomial_subtree_end(int rank, int ranks) { return std::min(rank + binomial_span(rank, ranks), ranks); }

Tree kary_tree(int ranks, int fanout) {
  if (fanout < 1) throw std::invalid_argument("kary_tree: fanout must be >= 1");
  Tree tree = without_edges(ranks);
  std::vector<std::pair<int, int>> subtrees{{0, ranks}};  // [root, end)
  while (!subtrees.empty()) {
    const auto [root, end] = subtrees.back();
    subtrees.pop_back();
    const int rest = end - root - 1;
    const int parts = std::min(fanout, rest);
    int begin = root + 1;
    for (int i = 0; i < parts; ++i) {
      const int size = rest / parts + (i < rest % parts ? 1 : 0);
      add_child(tree, root, begin);
      subtrees.emplace_back(begin, begin + size);
      begin += size;
    }
  }
  return tree;
}

Tree node_binomial_tree(int ranks, int node_ranks) {
  if (node_ranks < 1 || node_ranks >= ranks || ranks % node_ranks != 0) return binomial_tree(ranks);
  const int n = node_ranks, nodes = ranks / n;
  const Tree inside = binomial_tree(n), across = binomial_tree(nodes);
  Tree tree = without_edges(ranks);
  for (int k = 0; k < nodes; ++k) {
    for (int i = 0; i < n; ++i)
      for (const int child : inside.children_of(i)) add_child(tree, k * n + i, k * n + child);
    for (const int leader : across.children_of(k)) add_child(tree, k * n, leader * n);
  }
  return tree;
}

Tree heap_binary_tree(int ranks) {
  Tree tree = without_edges(ranks);
  for (int r = 0; r < ranks; ++r)
    for (const int child : {2 * r + 1, 2 * r + 2})
      if (child < ranks) add_child(tree, r, child);
  return tree;
}

}  // namespace earlybird::coll::detail
