// allreduce_segmented_ring — the ring with each chunk cut into segments that
// are pipelined: segment s of round k moves as soon as segment s of round k-1
// has been reduced, not when the whole chunk has.
//
// Cost (Hockney, segment ms bytes):
//   (P + m/(ms P) - 2)(alpha + beta ms + gamma ms) + (P-1)(alpha + beta m/P)
//   per rank: 2(P-1) * ceil(chunk/ms) puts, elements sent as in the ring.
// Open MPI's default for large vectors. In earlybird's dataflow execution the
// pipelining is not coded: the Builder derives per-segment dependencies from
// the segment ranges, so transfers of later segments overlap the reduction of
// earlier ones.
//
// Limitations: as allreduce_ring (commutative ops only; 2(P-1) chunk slots of
// scratch); more, smaller transfers cost more flags and more latency terms, so
// tiny segments lose; the default segment is set from the sweep in
// docs/algorithms.md.
//
// State for P = 4: the ring's table (see ring.cpp) holds per segment; with two
// segments per chunk, rs k=1 of segment 0 may run while rs k=0 of segment 1
// is still in flight.
#include "ring_phases.hpp"

#include <earlybird/collectives/allreduce.hpp>

namespace earlybird::coll {

RankPlan allreduce_segmented_ring_plan(int ranks, std::size_t count, std::size_t segment_elems, int rank) {
  return detail::ring_allreduce_rank_plan("allreduce_segmented_ring", ranks, count, segment_elems, rank);
}

Schedule allreduce_segmented_ring(int ranks, std::size_t count, std::size_t segment_elems) {
  Builder b("allreduce_segmented_ring", ranks, count);
  detail::ring_allreduce_phases(b, segment_elems);  // 0: one segment per chunk
  return std::move(b).finish();
}

}  // namespace earlybird::coll
