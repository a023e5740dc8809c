// Internal: the two phases of a ring allreduce, shared by the plain ring and
// the segmented (pipelined) ring, which differ only in segment size, and by
// the hierarchical allreduce, which runs them inside each node.
#pragma once

#include <earlybird/collectives/builder.hpp>
#include <earlybird/collectives/plan.hpp>

#include <string>

#include <vector>

namespace earlybird::coll::detail {

// Appends ring reduce-scatter + ring allgather over P balanced chunks, each
// chunk cut into segments of at most `segment_elems` (0: whole chunks).
void ring_allreduce_phases(Builder& b, std::size_t segment_elems);

// The two phases on their own, around a ring of the ranks `ring` (ring[i]
// sends to ring[i + 1 mod n]) over n = ring.size() balanced chunks of the
// vector. After the reduce-scatter, ring[i]'s output holds chunk
// ring_reduced_chunk(i, n) reduced over the ring (its other chunks are
// undefined); the allgather expects exactly that and leaves every chunk in
// every output. Each phase uses n - 1 chunk slots of scratch from offset 0:
// call Builder::begin_scratch_region() between them.
void ring_reduce_scatter_phase(Builder& b, const std::vector<int>& ring, std::size_t segment_elems);
void ring_allgather_phase(Builder& b, const std::vector<int>& ring, std::size_t segment_elems);
// Rank `rank`'s plan of ring_allreduce_phases (ring 0..P-1) under the name
// `algorithm`, written directly in O(its own steps) (ring.cpp).
RankPlan ring_allreduce_rank_plan(std::string algorithm, int ranks, std::size_t count, std::size_t segment_elems,
                                  int rank);
inline int ring_reduced_chunk(int position, int ranks) { return (position + 1) % ranks; }

}  // namespace earlybird::coll::detail
