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
// Pipelined by segment: each chunk is cut into segments of at most
// segment_elems elements (kHierarchicalDefaultBytes in the catalogue); the
// node phases move it segment by segment and the network step runs one
// allreduce per segment, each with its own scratch region. The Builder
// derives per-segment dependencies from the ranges, so segment s crosses the
// network as soon as its node reduction is done, while later segments are
// still being reduced in the node and earlier ones gathered.
//
// Cost (Hockney; node level alpha_n, beta_n, network the flat algorithm A's
// cost on m/n bytes over N ranks), one segment per chunk:
//   2(n-1)(alpha_n + beta_n m/n) + ((n-1)/n) gamma m + T_A(N, m/n)
// With S segments per chunk the three phases overlap: about
//   max(node phases, T_A(N, m/n)) + (node phases + T_A(N, m/n)) / S
// plus S times the alphas (each segment pays its own latencies).
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
// network algorithm alone (both unsegmented); the node phases are rings:
// 2(n-1) rounds, which at many ranks per node costs latency at small sizes
// (auto compares);
// the network algorithm is chosen under the default profile, not the
// calibrated one; the segment size is the catalogue's default, not chosen
// per call by the model.
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

#include <algorithm>
#include <map>
#include <vector>

namespace earlybird::coll {
namespace {

// The network step: the ranks at each position allreduce the chunk their
// node phase left them, read from `input_as`, one segment at a time. Each
// segment's exchanges get a scratch region of their own, so a later segment
// never waits for an earlier one's slots. Pieces of one length share one
// schedule (balanced chunks cut into segments have at most four lengths).
void network_step(Builder& b, int n, std::size_t segment_elems, Buffer input_as, std::size_t elem_bytes,
                  const CostModel& model) {
  const detail::NodeLayout layout{n, b.ranks() / n};
  std::vector<std::vector<Range>> pieces;  // per position, its chunk's segments
  std::size_t most = 0;
  for (int i = 0; i < n; ++i) {
    pieces.push_back(segments(chunk(b.count(), n, detail::ring_reduced_chunk(i, n)), segment_elems));
    most = std::max(most, pieces.back().size());
  }
  std::map<std::size_t, Schedule> by_length;
  auto schedule_for = [&](std::size_t length) -> const Schedule& {
    auto known = by_length.find(length);
    if (known != by_length.end()) return known->second;
    const auto chosen = detail::fastest_group_algorithm(layout.nodes, length, elem_bytes, model);
    return by_length
        .emplace(length, find_allreduce(chosen.name)->make(layout.nodes, length, AlgorithmParams{}, elem_bytes))
        .first->second;
  };
  for (std::size_t s = 0; s < most; ++s) {
    for (int i = 0; i < n; ++i) {
      const auto& mine = pieces[static_cast<std::size_t>(i)];
      if (s >= mine.size()) continue;
      detail::append_on_group(b, schedule_for(mine[s].count), layout.position(i), input_as, mine[s].begin);
    }
    b.begin_scratch_region();
  }
}

}  // namespace

Schedule allreduce_hierarchical(int ranks, std::size_t count, int node_ranks, std::size_t segment_elems,
                                std::size_t elem_bytes) {
  const detail::NodeLayout layout = detail::node_layout("allreduce_hierarchical", ranks, node_ranks);
  const int n = layout.n, nodes = layout.nodes;
  // Segments overlap the node phases with the network step: with one node
  // (the ring) or one rank per node (the network algorithm) there is nothing
  // to overlap, and the phases run whole.
  const std::size_t segment = n > 1 && nodes > 1 ? segment_elems : 0;
  Builder b("allreduce_hierarchical", ranks, count);
  for (int k = 0; k < nodes && n > 1; ++k) detail::ring_reduce_scatter_phase(b, layout.node(k), segment);
  b.begin_scratch_region();
  if (nodes > 1 && count > 0)
    network_step(b, n, segment, n > 1 ? Buffer::output : Buffer::input, elem_bytes, default_profile().network.model);
  b.begin_scratch_region();
  for (int k = 0; k < nodes && n > 1; ++k) detail::ring_allgather_phase(b, layout.node(k), segment);
  b.copy_unwritten_output();  // P = 1: output = input
  return std::move(b).finish();
}

}  // namespace earlybird::coll
