// Allgather schedule generators and the catalogue the runtime selects from.
// `count` is the block each rank contributes: input `count` elements, output
// ranks x count, and rank j's input lands in block j (elements j*count ..
// j*count+count-1) of every rank's output, rank j's own included. Each
// generator's file opens with cost, limitations and a state table for P = 4.
#pragma once

#include <earlybird/collectives/catalogue.hpp>
#include <earlybird/collectives/schedule.hpp>

#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

namespace earlybird::coll {

// `keep` (every generator but inline_flags): only the steps touching these ranks' memory
// (Builder::keep_only, per-rank plans); empty: the whole schedule.
Schedule allgather_ring(int ranks, std::size_t count, const std::vector<int>& keep = {});
Schedule allgather_recursive_doubling(int ranks, std::size_t count, const std::vector<int>& keep = {});
Schedule allgather_bruck(int ranks, std::size_t count, const std::vector<int>& keep = {});
// Their bounds (Algorithm::bounds): P blocks of scratch; the flags their
// rounds can raise at one rank.
PlanBounds allgather_recursive_doubling_bounds(int ranks, std::size_t count);
PlanBounds allgather_bruck_bounds(int ranks, std::size_t count);
// Across nodes of `node_ranks` consecutive ranks each: a ring among the
// ranks at each node position, then rings inside every node
// (hierarchical.cpp). node_ranks = 0: one node; otherwise it must divide
// ranks (std::invalid_argument).
Schedule allgather_hierarchical(int ranks, std::size_t count, int node_ranks, const std::vector<int>& keep = {});
// Upper bounds of the maxima of both (Algorithm::bounds): every rank receives
// the P - 1 other blocks, each into a scratch slot of its own, one flag each.
PlanBounds allgather_blockwise_bounds(int ranks, std::size_t count);
// Every rank publishes its block; every rank reads all (inline_flags.cpp).
Schedule allgather_inline_flags(int ranks, std::size_t count);

inline std::span<const Algorithm> allgather_algorithms() { return algorithms(Collective::allgather); }
inline const Algorithm* find_allgather(std::string_view name) { return find_algorithm(Collective::allgather, name); }

}  // namespace earlybird::coll
