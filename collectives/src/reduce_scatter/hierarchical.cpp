// reduce_scatter_hierarchical — for ranks on several nodes of n = node_ranks
// consecutive virtual ranks (N = P / n nodes; position t of node k is rank
// k n + t): every block's node sums cross to its owner's node once.
//
//   node:    in every node, for each node k', the node's n ranks reduce the
//            blocks of node k''s ranks around the node's ring (N rings side
//            by side); position t ends with block k' n + t summed over its
//            node, for every k';
//   network: for each position t, the N ranks at position t reduce those
//            node sums around a ring; rank k n + t ends with its own block
//            summed over all ranks, in its output.
//
// Cost (Hockney, B bytes per block; node level alpha_n, beta_n):
//   N (n - 1)(alpha_n + (beta_n + gamma) B) + (N - 1)(alpha + (beta + gamma) B)
//   per rank: P - 1 puts, P - 1 blocks sent and reduced, as the ring; rounds
//   (n - 1) + (N - 1), the node's N rings running side by side.
// A node's link carries n (N - 1) blocks each way, what has to cross; a flat
// ring in block order carries P - 1 through it.
//
// Limitations: needs a commutative operator (node sums are combined across
// the nodes in ring order); rings at both levels, so (n - 1) + (N - 1) rounds
// of latency and N (n - 1) one-block puts in the node phase: small blocks want
// recursive halving (auto compares); n must divide P (std::invalid_argument);
// n = 0 or P (one node) and n = 1 are the ring. Scratch: P - 1 blocks per
// rank, each partial its own slot, never reused (no acknowledgement flags).
// In place: the output is written once, by the network ring's last round,
// after the rank's every read of its input. Planned per rank
// (AlgorithmParams::keep: rings without a kept rank are skipped), with the
// ring's bounds (P - 1 slots and flags).
//
// State for P = 4, n = 2 (nodes {0,1}, {2,3}; "b2:0,1" = block 2 summed
// over ranks 0 and 1):
//   phase     rank 0          rank 1          rank 2          rank 3
//   node      b0:0,1 b2:0,1   b1:0,1 b3:0,1   b0:2,3 b2:2,3   b1:2,3 b3:2,3
//   network   b0:all          b1:all          b2:all          b3:all     (0<->2, 1<->3)
#include "ring_phase.hpp"

#include "../schedule/block_slots.hpp"
#include "../topology/nodes.hpp"

#include <earlybird/collectives/builder.hpp>
#include <earlybird/collectives/reduce_scatter.hpp>

#include <vector>

namespace earlybird::coll {
namespace {

using detail::block_slot;

// Scratch of one rank: the node rings' partials, n - 1 slots for each node
// k' (the last one its node sum of block k' n + t), then the network ring's
// N - 1 slots.
class Slots {
 public:
  Slots(int n, int nodes, std::size_t count) : n_(n), nodes_(nodes), count_(count) {}
  Slot node_partial(int rank, int travelling, int k) const {
    return block_slot(rank, Buffer::scratch, count_, static_cast<std::size_t>(travelling * (n_ - 1) + k));
  }
  // What the network ring adds for node k': the node sum, or the input's
  // block where a node is one rank.
  Slot node_sum(int rank, int travelling) const {
    if (n_ == 1) return block_slot(rank, Buffer::input, count_, static_cast<std::size_t>(travelling));
    return node_partial(rank, travelling, n_ - 2);
  }
  Slot network_partial(int rank, int k) const {
    return block_slot(rank, Buffer::scratch, count_, static_cast<std::size_t>(nodes_ * (n_ - 1) + k));
  }
  std::size_t count() const { return count_; }
  int n() const { return n_; }
  int nodes() const { return nodes_; }

 private:
  int n_, nodes_;
  std::size_t count_;
};

// Node k's ring over the blocks of node `travelling`'s ranks.
class NodeRing final : public detail::RingReduceLayout {
 public:
  NodeRing(const Slots& slots, int travelling) : slots_(slots), travelling_(travelling) {}
  Slot contribution(int rank, int j) const override {
    return block_slot(rank, Buffer::input, slots_.count(), static_cast<std::size_t>(travelling_ * slots_.n() + j));
  }
  Slot landing(int rank, int k) const override { return slots_.node_partial(rank, travelling_, k); }
  Slot result(int rank) const override {
    if (slots_.nodes() == 1) return block_slot(rank, Buffer::output, slots_.count());
    return slots_.node_sum(rank, travelling_);
  }

 private:
  const Slots& slots_;
  int travelling_;
};

// The ring of the ranks at one position across the nodes: block j is node
// j's block at that position.
class NetworkRing final : public detail::RingReduceLayout {
 public:
  explicit NetworkRing(const Slots& slots) : slots_(slots) {}
  Slot contribution(int rank, int j) const override { return slots_.node_sum(rank, j); }
  Slot landing(int rank, int k) const override { return slots_.network_partial(rank, k); }
  Slot result(int rank) const override { return block_slot(rank, Buffer::output, slots_.count()); }

 private:
  const Slots& slots_;
};

}  // namespace

Schedule reduce_scatter_hierarchical(int ranks, std::size_t count, int node_ranks, const std::vector<int>& keep) {
  const detail::NodeLayout nodes = detail::node_layout("reduce_scatter_hierarchical", ranks, node_ranks);
  Builder b("reduce_scatter_hierarchical", ranks, count, shape_of(Collective::reduce_scatter, ranks, count));
  b.keep_only(keep);
  const Slots slots(nodes.n, nodes.nodes, count);
  for (int k = 0; k < nodes.nodes && nodes.n > 1; ++k) {
    const std::vector<int> node = nodes.node(k);
    if (!b.keeps_any(node)) continue;
    for (int travelling = 0; travelling < nodes.nodes; ++travelling)
      detail::ring_reduce_scatter_phase(b, NodeRing(slots, travelling), node);
  }
  for (int t = 0; t < nodes.n && nodes.nodes > 1; ++t)
    if (const std::vector<int> column = nodes.position(t); b.keeps_any(column))
      detail::ring_reduce_scatter_phase(b, NetworkRing(slots), column);
  if (ranks == 1) b.copy({0, Buffer::output, {0, count}}, {0, Buffer::input, {0, count}});
  return std::move(b).finish();
}

}  // namespace earlybird::coll
