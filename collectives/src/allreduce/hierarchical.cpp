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
// Per-rank plans: AlgorithmParams::keep skips the nodes and network groups
// without a kept rank and replays each network schedule focused on the
// group's kept members; the bounds add the node rings' 2(n - 1) slots and,
// per network round, the most any group's schedule uses. The network
// algorithm's choice is remembered per process (fastest_group_algorithm).
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
// (auto compares); the network algorithm is chosen under the default
// profile, not the calibrated one; the segment size is the catalogue's
// default, not chosen per call by the model; a plan's steps grow with the
// segments (P = 16384 in nodes of 16, 64 MiB: 1600 steps, 0.12-0.15 s to
// plan; docs/benchmarks.md).
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

// The network step's pieces and their schedules: position i's chunk cut into
// segments; segment s of every position runs in one scratch region. Pieces of
// one length share one schedule (balanced chunks cut into segments have at
// most four lengths), the flat algorithm the schedule simulator predicts
// fastest for the nodes and that length under the default profile's network
// level.
class NetworkStep {
 public:
  NetworkStep(int ranks, std::size_t count, int n, std::size_t segment_elems, std::size_t elem_bytes)
      : layout_{n, ranks / n}, elem_bytes_(elem_bytes) {
    for (int i = 0; i < n; ++i) {
      pieces_.push_back(segments(chunk(count, n, detail::ring_reduced_chunk(i, n)), segment_elems));
      rounds_ = std::max(rounds_, pieces_.back().size());
    }
  }
  const detail::NodeLayout& layout() const { return layout_; }
  std::size_t rounds() const { return rounds_; }
  // Position i's piece in round s; empty where its chunk has fewer segments.
  Range piece(int i, std::size_t s) const {
    const auto& mine = pieces_[static_cast<std::size_t>(i)];
    return s < mine.size() ? mine[s] : Range{};
  }
  // The schedule for a piece of `length` elements, focused on the group's
  // members `keep` (virtual ranks, Builder::keep_only; empty: every one).
  const Schedule& schedule_for(std::size_t length, const std::vector<int>& keep = {}) {
    auto known = made_.find({length, keep});
    if (known != made_.end()) return known->second;
    AlgorithmParams params;
    params.keep = keep;
    return made_.emplace(std::pair{length, keep},
                         find_allreduce(algorithm_for(length))->make(layout_.nodes, length, params, elem_bytes_))
        .first->second;
  }
  // The bounds of a piece of `length` elements' schedule.
  PlanBounds bounds_for(std::size_t length) const {
    return detail::group_bounds(algorithm_for(length), layout_.nodes, length, elem_bytes_);
  }

 private:
  detail::NodeLayout layout_;
  std::string_view algorithm_for(std::size_t length) const {
    return detail::fastest_group_algorithm(layout_.nodes, length, elem_bytes_, default_profile().network.model).name;
  }

  std::size_t elem_bytes_;
  std::vector<std::vector<Range>> pieces_;  // per position
  std::size_t rounds_ = 0;
  std::map<std::pair<std::size_t, std::vector<int>>, Schedule> made_;
};

// The network step: the ranks at each position allreduce the chunk their
// node phase left them, read from `input_as`, one segment at a time, each
// round in a scratch region of its own, so a later segment never waits for
// an earlier one's slots. A focused build (Builder::keep_only) skips the
// groups without a kept rank and replays the others' schedules focused on
// their kept members.
void network_step(Builder& b, NetworkStep& step, Buffer input_as) {
  for (std::size_t s = 0; s < step.rounds(); ++s) {
    for (int i = 0; i < step.layout().n; ++i) {
      const Range piece = step.piece(i, s);
      const std::vector<int> group = step.layout().position(i);
      if (piece.empty() || !b.keeps_any(group)) continue;
      detail::append_on_group(b, step.schedule_for(piece.count, detail::kept_members(b, group)), group, input_as,
                              piece.begin);
    }
    b.begin_scratch_region();
  }
}

// Segments overlap the node phases with the network step: with one node
// (the ring) or one rank per node (the network algorithm) there is nothing
// to overlap, and the phases run whole.
std::size_t overlapped_segment(const detail::NodeLayout& layout, std::size_t segment_elems) {
  return layout.n > 1 && layout.nodes > 1 ? segment_elems : 0;
}

}  // namespace

Schedule allreduce_hierarchical(int ranks, std::size_t count, int node_ranks, std::size_t segment_elems,
                                std::size_t elem_bytes, const std::vector<int>& keep) {
  const detail::NodeLayout layout = detail::node_layout("allreduce_hierarchical", ranks, node_ranks);
  const int n = layout.n, nodes = layout.nodes;
  const std::size_t segment = overlapped_segment(layout, segment_elems);
  Builder b("allreduce_hierarchical", ranks, count);
  b.keep_only(keep);
  auto node_phase = [&](auto phase) {
    for (int k = 0; k < nodes && n > 1; ++k)
      if (const std::vector<int> node = layout.node(k); b.keeps_any(node)) phase(b, node, segment);
  };
  node_phase(detail::ring_reduce_scatter_phase);
  b.begin_scratch_region();
  if (nodes > 1 && count > 0) {
    NetworkStep step(ranks, count, n, segment, elem_bytes);
    network_step(b, step, n > 1 ? Buffer::output : Buffer::input);
  }
  b.begin_scratch_region();
  node_phase(detail::ring_allgather_phase);
  b.copy_unwritten_output();  // P = 1: output = input
  return std::move(b).finish();
}

// Per rank: the node phases' 2(n - 1) chunk slots (each segment of a chunk
// one flag), then for each round of the network step the most any group's
// schedule uses (the network algorithm's bounds, or its whole schedule's
// maxima where it has none; added over the rounds).
PlanBounds allreduce_hierarchical_bounds(int ranks, std::size_t count, int node_ranks, std::size_t segment_elems,
                                         std::size_t elem_bytes) {
  const detail::NodeLayout layout = detail::node_layout("allreduce_hierarchical", ranks, node_ranks);
  if (count == 0 || ranks == 1) return {};
  const std::size_t segment = overlapped_segment(layout, segment_elems);
  PlanBounds sum;
  if (layout.n > 1) sum = allreduce_ring_bounds(layout.n, count, segment);
  if (layout.nodes == 1) return sum;
  NetworkStep step(ranks, count, layout.n, segment, elem_bytes);
  for (std::size_t s = 0; s < step.rounds(); ++s) {
    PlanBounds most;
    for (int i = 0; i < layout.n; ++i) {
      const Range piece = step.piece(i, s);
      if (piece.empty()) continue;
      const PlanBounds network = step.bounds_for(piece.count);
      most.scratch_elems = std::max(most.scratch_elems, network.scratch_elems);
      most.flags = std::max(most.flags, network.flags);
    }
    sum.scratch_elems += most.scratch_elems;
    sum.flags += most.flags;
  }
  return sum;
}

}  // namespace earlybird::coll
