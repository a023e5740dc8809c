// Internal: broadcast phases, each appending to a Builder a broadcast of rank
// 0's `source` buffer (Buffer::input for a plain bcast, Buffer::output after a
// reduce phase) into every rank's output, rank 0's included (the runtime skips
// that copy when rank 0's input and output are one buffer).
#pragma once

#include "../schedule/build_schedule.hpp"
#include "../topology/tree.hpp"

#include <earlybird/collectives/builder.hpp>

#include <cstddef>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace earlybird::coll::detail {

void bcast_binomial_phase(Builder& b, Buffer source);
void bcast_chain_phase(Builder& b, Buffer source, std::size_t segment_elems);
void bcast_binary_tree_phase(Builder& b, Buffer source, std::size_t segment_elems);
void bcast_hierarchical_phase(Builder& b, Buffer source, int node_ranks, std::size_t segment_elems);
void bcast_scatter_allgather_phase(Builder& b, Buffer source);

// The tree broadcasts' loop over a relabelled tree: node i of `tree` is rank
// rank_of_node[i] (one entry per node; node 0, the root, sends its `source`),
// per segment of at most `segment_elems` (0: one segment); every other node's
// rank gets the vector in its output through one scratch vector. The root's
// own output is left alone. For a broadcast from a rank other than 0 inside a
// composed schedule (arrival_greedy: from the last rank to arrive).
void relabelled_tree_bcast_phase(Builder& b, Buffer source, const Tree& tree, ChildOrder order,
                                 std::size_t segment_elems, std::span<const int> rank_of_node);

// Rank 0's output = its input when the source is its input (nothing when the
// source is already its output). Appended after rank 0's last read of input,
// so an in-place call (input aliases output) never reads overwritten input.
void copy_root_output(Builder& b, Buffer source);

// A bcast generator: `phase(b, Buffer::input)` on a fresh Builder (focused on
// `keep` where given).
template <class Phase>
Schedule bcast_schedule(std::string name, int ranks, std::size_t count, Phase phase, const std::vector<int>& keep = {}) {
  return build_schedule(
      std::move(name), Collective::bcast, ranks, count, [&](Builder& b) { phase(b, Buffer::input); }, keep);
}

}  // namespace earlybird::coll::detail
