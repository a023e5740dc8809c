// Internal: the ring reduce-scatter phase, shared by reduce_scatter_ring
// (ring.cpp) and reduce_scatter_hierarchical. Around a ring of m ranks, the
// partial sum of block j travels from the ring's (j+1)-th rank to its j-th,
// every rank on the way adding its own contribution; a layout says where
// each rank's contributions are and where the partials and results land.
#pragma once

#include <earlybird/collectives/builder.hpp>

#include <vector>

namespace earlybird::coll::detail {

class RingReduceLayout {
 public:
  virtual ~RingReduceLayout() = default;
  // What `rank` adds to block j (its input's block, or an earlier phase's sum).
  virtual Slot contribution(int rank, int j) const = 0;
  // The scratch where `rank` receives (and adds to) the partial of round k.
  virtual Slot landing(int rank, int k) const = 0;
  // Where `rank`, the ring's j-th, keeps block j's sum over the whole ring.
  virtual Slot result(int rank) const = 0;
};

// Appends m-1 rounds (`ring`: its ranks in ring order; empty: every rank, 0
// to P-1): in round k the ring's q-th rank puts its partial of block q-1-k
// (mod m) into the next rank's landing of round k (round 0: its own
// contribution), which then combines its own contribution on the left of it
// (the last round: into its result). All puts of a round come before its
// reduces in program order: a result may be the output that an in-place
// call shares with an input that round 0 still reads (P = 2). A ring of one
// rank appends nothing (the caller copies its contribution to its result).
void ring_reduce_scatter_phase(Builder& b, const RingReduceLayout& layout, const std::vector<int>& ring = {});

}  // namespace earlybird::coll::detail
