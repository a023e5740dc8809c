// Internal: the node layout the hierarchical generators share. Nodes of n
// consecutive virtual ranks (AlgorithmParams::node_ranks), N = P / n of
// them; position t of node k is rank k n + t.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace earlybird::coll::detail {

struct NodeLayout {
  int n = 1;      // ranks per node
  int nodes = 1;  // N
  // The ranks of node k, in position order.
  std::vector<int> node(int k) const { return run(k * n, n, 1); }
  // The ranks at position t, one per node, in node order.
  std::vector<int> position(int t) const { return run(t, nodes, n); }

 private:
  static std::vector<int> run(int first, int count, int stride) {
    std::vector<int> ranks;
    for (int i = 0; i < count; ++i) ranks.push_back(first + i * stride);
    return ranks;
  }
};

// node_ranks = 0: one node of every rank. Throws std::invalid_argument
// "<generator>: nodes of <node_ranks> ranks do not divide the <P> ranks"
// when node_ranks is negative or does not divide P.
inline NodeLayout node_layout(const std::string& generator, int ranks, int node_ranks) {
  if (node_ranks < 0 || (node_ranks > 0 && ranks % node_ranks != 0))
    throw std::invalid_argument(generator + ": nodes of " + std::to_string(node_ranks) + " ranks do not divide the " +
                                std::to_string(ranks) + " ranks");
  const int n = node_ranks == 0 ? ranks : node_ranks;
  return {n, ranks / n};
}

}  // namespace earlybird::coll::detail
