// allreduce_hierarchical — for ranks on several nodes: reduce-scatter inside
// each node, allreduce of each node-reduced chunk across the nodes, allgather
// inside each node. Ranks are grouped into nodes of n = node_ranks
// consecutive virtual ranks (N = P / n nodes); local position i of node k is
// virtual rank k n + i.
//
//   node phase 1: in every node a ring reduce-scatter over n chunks of the
//                 vector (ring_phases.hpp): position i ends holding chunk
//                 c(i) = (i + 1) mod n reduced over its node;
//   network:      for each position i, the N ranks at position i (one per
//                 node) allreduce chunk c(i) in place, with the flat
//                 algorithm the schedule simulator predicts fastest for N
//                 ranks and that chunk under the default profile's network
//                 level (fastest_group_algorithm);
//   node phase 2: in every node a ring allgather of the n chunks.
//
// Cost (Hockney; node level alpha_n, beta_n, network the flat algorithm A's
// cost on m/n bytes over N ranks):
//   2(n-1)(alpha_n + beta_n m/n) + ((n-1)/n) gamma m + T_A(N, m/n)
// Every rank takes part in the network step with 1/n of the vector, so a
// node's link carries 2(N-1)/N m each way, what one rank of a flat
// algorithm over N ranks sends; a flat ring over P ranks in block order
// carries 2(P-1)/P m through it. Rabenseifner in block order carries the
// same as this when P and n are powers of two; the gain is at other layouts
// (docs/algorithms.md, simulated table).
//
// Limitations: needs a commutative operator (ring phases and the network
// step combine out of rank order); n must divide P (the runtime passes the
// layout only when every node holds the same number of consecutive ranks);
// node_ranks = 0 or P (one node) is the ring allreduce, node_ranks = 1 is the
// network algorithm alone; the node phases are rings: 2(n-1) rounds, which
// at many ranks per node costs latency at small sizes (auto compares);
// the network algorithm is chosen under the default profile, not the
// calibrated one.
//
// State for P = 4, n = 2 (nodes {0,1}, {2,3}; two chunks c0, c1; "c1:0,1"
// = chunk 1 reduced over ranks 0 and 1):
//   phase        rank 0      rank 1      rank 2      rank 3
//   node rs      c1:0,1      c0:0,1      c1:2,3      c0:2,3
//   network      c1:all      c0:all      c1:all      c0:all   (0<->2, 1<->3)
//   node ag      c0,c1:all   c0,c1:all   c0,c1:all   c0,c1:all
#include "group_steps.hpp"
#include "ring_phases.hpp"

#include "../topology/nodes.hpp"

#include <earlybird/collectives/allreduce.hpp>
#include <earlybird/collectives/partition.hpp>
#include <earlybird/collectives/predict.hpp>

#include <map>

namespace earlybird::coll {
namespace {

// The network step: the ranks at each position allreduce the chunk their
// node phase left them, read from `input_as`. Chunks of one length share one
// schedule (balanced chunks have at most two lengths).
void network_step(Builder& b, int n, Buffer input_as, std::size_t elem_bytes, const CostModel& model) {
  const int nodes = b.ranks() / n;
  std::map<std::size_t, Schedule> by_length;
  for (int i = 0; i < n; ++i) {
    const Range piece = chunk(b.count(), n, detail::ring_reduced_chunk(i, n));
    if (piece.empty()) continue;
    auto known = by_length.find(piece.count);
    if (known == by_length.end()) {
      const auto chosen = detail::fastest_group_algorithm(nodes, piece.count, elem_bytes, model);
      known = by_length.emplace(piece.count, find_allreduce(chosen.name)->make(nodes, piece.count, AlgorithmParams{},
                                                                              elem_bytes)).first;
    }
    detail::append_on_group(b, known->second, detail::NodeLayout{n, nodes}.position(i), input_as, piece.begin);
  }
}

}  // namespace

Schedule allreduce_hierarchical(int ranks, std::size_t count, int node_ranks, std::size_t elem_bytes) {
  const detail::NodeLayout layout = detail::node_layout("allreduce_hierarchical", ranks, node_ranks);
  const int n = layout.n, nodes = layout.nodes;
  Builder b("allreduce_hierarchical", ranks, count);
  for (int k = 0; k < nodes && n > 1; ++k) detail::ring_reduce_scatter_phase(b, layout.node(k), 0);
  b.begin_scratch_region();
  if (nodes > 1 && count > 0)
    network_step(b, n, n > 1 ? Buffer::output : Buffer::input, elem_bytes, default_profile().network.model);
  b.begin_scratch_region();
  for (int k = 0; k < nodes && n > 1; ++k) detail::ring_allgather_phase(b, layout.node(k), 0);
  b.copy_unwritten_output();  // P = 1: output = input
  return std::move(b).finish();
}

}  // namespace earlybird::coll
