// Internal: reduction phases, each appending to a Builder a reduction of every
// rank's input into rank 0's output (rank 0 is the root; the runtime rotates
// ranks for other roots). Non-root ranks never write their output: partial
// results live in scratch. The reduce generators wrap one phase each; the
// allreduce compositions (binomial, binary_tree, reduce_bcast) chain a phase
// with a broadcast phase (../bcast/bcast_phases.hpp).
#pragma once

#include <earlybird/collectives/builder.hpp>

#include <cstddef>

namespace earlybird::coll::detail {

void reduce_binomial_phase(Builder& b);
void reduce_chain_phase(Builder& b, std::size_t segment_elems);
void reduce_binary_tree_phase(Builder& b, std::size_t segment_elems);
void reduce_kary_tree_phase(Builder& b, int fanout, std::size_t segment_elems);
void reduce_hierarchical_phase(Builder& b, int node_ranks, std::size_t segment_elems);
void reduce_greedy_phase(Builder& b, std::size_t segment_elems);
// The greedy over ranks 0 .. ranks-1 only (1 <= ranks <= P; the others take
// no part): their inputs reduced into rank 0's output. What arrival_greedy
// runs among the ranks that arrived before the last one.
void reduce_greedy_phase(Builder& b, int ranks, std::size_t segment_elems);

}  // namespace earlybird::coll::detail
