// Reduce schedule generators (every rank's input into rank 0's output; the
// runtime binds virtual ranks so any root works) and the catalogue's reduce
// table. Each generator is a pure function; its file opens with cost,
// limitations and a state table for P = 4. Non-root outputs are never written.
//
// segment_elems is the pipelining unit in elements; 0 means one segment (no
// pipelining). The catalogue never passes 0: its 0 means "the default segment".
#pragma once

#include <earlybird/collectives/catalogue.hpp>
#include <earlybird/collectives/schedule.hpp>

#include <cstddef>
#include <span>
#include <string_view>

namespace earlybird::coll {

// Binomial tree, whole vector per transfer; keeps rank order.
Schedule reduce_binomial(int ranks, std::size_t count);
// Every rank publishes; the root reads all and folds in rank order
// (inline_flags.cpp).
Schedule reduce_inline_flags(int ranks, std::size_t count);
// Pipelined chain P-1 -> ... -> 0; keeps rank order.
Schedule reduce_chain(int ranks, std::size_t count, std::size_t segment_elems);
// Pipelined balanced binary tree (left child, then right); keeps rank order.
Schedule reduce_binary_tree(int ranks, std::size_t count, std::size_t segment_elems);
// Over nodes of node_ranks consecutive ranks: each node's binomial tree into
// its leader, then the leaders' (tree_reduce.cpp); node_ranks = 0: one node.
Schedule reduce_hierarchical(int ranks, std::size_t count, int node_ranks, std::size_t segment_elems);
// Pipelined balanced k-ary tree, fanout >= 1; keeps rank order.
Schedule reduce_kary_tree(int ranks, std::size_t count, int fanout, std::size_t segment_elems);
// Lowery-Langou greedy pipelined reduction; needs a commutative operator.
// With one segment it is reduce_binomial.
Schedule reduce_greedy(int ranks, std::size_t count, std::size_t segment_elems);

// The catalogue's reduce table (catalogue.hpp has the general form).
inline std::span<const Algorithm> reduce_algorithms() { return algorithms(Collective::reduce); }
inline const Algorithm* find_reduce(std::string_view name) { return find_algorithm(Collective::reduce, name); }

}  // namespace earlybird::coll
