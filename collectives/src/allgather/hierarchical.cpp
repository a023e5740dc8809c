// allgather_hierarchical — for ranks on several nodes of n = node_ranks
// consecutive virtual ranks (N = P / n nodes; position i of node k is rank
// k n + i): every block crosses to each other node once.
//
//   network: for each position i, the N ranks at position i pass their own
//            blocks around a ring; rank (k, i) ends with column i, the
//            blocks of ranks k' n + i for every node k';
//   node:    in every node, for each node k', the node's n ranks pass node
//            k''s blocks around the node's ring (the block of rank k' n + t
//            starts on position t): N rings side by side.
//
// Cost (Hockney, B bytes per block; node level alpha_n, beta_n):
//   (N - 1)(alpha + beta B) + N (n - 1)(alpha_n + beta_n B)
//   per rank: P - 1 puts, P - 1 blocks sent, as the ring; rounds
//   (N - 1) + (n - 1), the node's N rings running side by side.
// A node's link carries n (N - 1) blocks each way, what has to cross; a flat
// ring in block order carries P - 1 through it (4 x 2 ranks: 6 against 7;
// 2 x 8: 8 against 15).
//
// Limitations: rings at both levels, so (N - 1) + (n - 1) rounds of latency
// and N (n - 1) one-block puts in the node phase: small blocks want bruck or
// recursive doubling (auto compares); n must divide P (std::invalid_argument);
// n = 0 or P (one node) and n = 1 are the ring with its steps in another
// order. Scratch: P - 1 blocks per rank, each landing its own slot, never
// reused (no acknowledgement flags). A rank first copies its input into its
// output block, so an in-place call needs nothing special. Planned per rank
// (AlgorithmParams::keep: rings without a kept rank are skipped), with the
// ring's bounds (P - 1 slots and flags).
//
// State for P = 4, n = 2 (nodes {0,1}, {2,3}; blocks each rank holds):
//   phase     rank 0    rank 1    rank 2    rank 3
//   start     0         1         2         3
//   network   0 2       1 3       2 0       3 1      (0<->2, 1<->3)
//   node      all       all       all       all      (each node: a ring of blocks {0,1}, one of {2,3})
#include "ring_phase.hpp"

#include "../topology/nodes.hpp"

#include <earlybird/collectives/allgather.hpp>
#include <earlybird/collectives/builder.hpp>

#include <vector>

namespace earlybird::coll {
namespace {

// One ring's blocks: block j starts on ring[j] and ends at the output block
// of rank owners[j]; a rank receives the block of its round k into scratch
// slot first_slot + k (every ring of a rank its own slots).
// `ring` is one of NodeLayout's runs (a node, or a node position): evenly
// spaced ranks, so a rank's place in it is (rank - first) / stride.
class RingOfBlocks final : public detail::RingAllgatherLayout {
 public:
  RingOfBlocks(std::vector<int> ring, std::vector<int> owners, std::size_t count, std::size_t first_slot)
      : ring_(std::move(ring)),
        owners_(std::move(owners)),
        count_(count),
        first_slot_(first_slot),
        stride_(ring_.size() > 1 ? ring_[1] - ring_[0] : 1) {}
  Range block(int j) const override {
    return {static_cast<std::size_t>(owners_[static_cast<std::size_t>(j)]) * count_, count_};
  }
  bool holds(int rank, int j) const override { return rank == ring_[static_cast<std::size_t>(j)]; }
  Slot origin(int rank, int j) const override { return {rank, Buffer::output, block(j)}; }
  Slot landing(int rank, int j) const override {
    const int m = static_cast<int>(ring_.size());
    const int q = (rank - ring_[0]) / stride_;
    const auto round = static_cast<std::size_t>((q - 1 - j + 2 * m) % m);
    return {rank, Buffer::scratch, {(first_slot_ + round) * count_, count_}};
  }

 private:
  std::vector<int> ring_, owners_;
  std::size_t count_, first_slot_;
  int stride_;
};

}  // namespace

Schedule allgather_hierarchical(int ranks, std::size_t count, int node_ranks, const std::vector<int>& keep) {
  const detail::NodeLayout nodes = detail::node_layout("allgather_hierarchical", ranks, node_ranks);
  Builder b("allgather_hierarchical", ranks, count, shape_of(Collective::allgather, ranks, count));
  b.keep_only(keep);
  for (int r = 0; r < ranks; ++r)
    b.copy({r, Buffer::output, {static_cast<std::size_t>(r) * count, count}}, {r, Buffer::input, {0, count}});
  for (int i = 0; i < nodes.n && nodes.nodes > 1; ++i) {
    const std::vector<int> column = nodes.position(i);
    if (b.keeps_any(column)) detail::ring_allgather_phase(b, RingOfBlocks(column, column, count, 0), column);
  }
  for (int k = 0; k < nodes.nodes && nodes.n > 1; ++k) {
    const std::vector<int> node = nodes.node(k);
    if (!b.keeps_any(node)) continue;
    for (int travelling = 0; travelling < nodes.nodes; ++travelling) {
      const auto first_slot = static_cast<std::size_t>((nodes.nodes - 1) + travelling * (nodes.n - 1));
      detail::ring_allgather_phase(b, RingOfBlocks(node, nodes.node(travelling), count, first_slot), node);
    }
  }
  return std::move(b).finish();
}

}  // namespace earlybird::coll
