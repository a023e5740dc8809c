// Reduce-scatter (block variant) schedule generators and the catalogue the
// runtime selects from. `count` is the block each rank ends with: input
// ranks x count elements, output `count`, and rank r's output holds element
// i of block r (input elements r*count + i) reduced over all ranks. Each
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
Schedule reduce_scatter_ring(int ranks, std::size_t count, const std::vector<int>& keep = {});
Schedule reduce_scatter_recursive_halving(int ranks, std::size_t count, const std::vector<int>& keep = {});
// Its bounds (Algorithm::bounds): every round's landing region and a fold's
// P blocks; the flags its rounds can raise at one rank.
PlanBounds reduce_scatter_recursive_halving_bounds(int ranks, std::size_t count);
// Across nodes of `node_ranks` consecutive ranks each: rings inside every
// node, then a ring among the ranks at each node position
// (hierarchical.cpp). node_ranks = 0: one node; otherwise it must divide
// ranks (std::invalid_argument).
Schedule reduce_scatter_hierarchical(int ranks, std::size_t count, int node_ranks, const std::vector<int>& keep = {});
// Upper bounds of the maxima of both (Algorithm::bounds): every rank receives
// P - 1 partial sums, each into a scratch slot of its own, one flag each.
PlanBounds reduce_scatter_blockwise_bounds(int ranks, std::size_t count);
// Every rank publishes its input; rank r reads block r of all and folds
// in rank order (inline_flags.cpp).
Schedule reduce_scatter_inline_flags(int ranks, std::size_t count);

inline std::span<const Algorithm> reduce_scatter_algorithms() { return algorithms(Collective::reduce_scatter); }
inline const Algorithm* find_reduce_scatter(std::string_view name) {
  return find_algorithm(Collective::reduce_scatter, name);
}

}  // namespace earlybird::coll
