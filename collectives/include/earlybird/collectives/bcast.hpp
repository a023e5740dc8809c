// Broadcast schedule generators (root 0; the runtime rotates ranks for other
// roots) and the catalogue the runtime selects from. Each generator is a pure
// function; its file opens with cost, limitations and a state table for P = 4.
// Input and output are `count` elements; only rank 0's input is read.
#pragma once

#include <earlybird/collectives/catalogue.hpp>
#include <earlybird/collectives/schedule.hpp>

#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

namespace earlybird::coll {

Schedule bcast_binomial(int ranks, std::size_t count);
// The root publishes; every other rank reads it (inline_flags.cpp).
Schedule bcast_inline_flags(int ranks, std::size_t count);
// segment_elems = 0: the whole vector is one segment (no pipelining).
Schedule bcast_chain(int ranks, std::size_t count, std::size_t segment_elems);
Schedule bcast_binary_tree(int ranks, std::size_t count, std::size_t segment_elems);
// Over nodes of node_ranks consecutive ranks: the leaders' binomial tree, then
// each node's (tree_bcast.cpp); node_ranks = 0: one node.
Schedule bcast_hierarchical(int ranks, std::size_t count, int node_ranks, std::size_t segment_elems);
// `keep`: only the steps touching these ranks' memory (Builder::keep_only,
// per-rank plans); empty: the whole schedule.
Schedule bcast_scatter_allgather(int ranks, std::size_t count, const std::vector<int>& keep = {});
// Upper bounds of its maxima (Algorithm::bounds): one vector of scratch, and
// at most P flags (one scatter put, then a ring put per chunk not yet held).
PlanBounds bcast_scatter_allgather_bounds(int ranks, std::size_t count);

inline std::span<const Algorithm> bcast_algorithms() { return algorithms(Collective::bcast); }
inline const Algorithm* find_bcast(std::string_view name) { return find_algorithm(Collective::bcast, name); }

}  // namespace earlybird::coll
