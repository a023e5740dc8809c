// Internal: the ring allgather phase, shared by allgather_ring (ring.cpp) and
// bcast_scatter_allgather. P blocks circulate around the ring r -> r+1; a
// layout says where each block goes and where each rank keeps it.
#pragma once

#include <earlybird/collectives/builder.hpp>

#include <vector>

namespace earlybird::coll::detail {

// Block j is the piece that starts on the ring's j-th rank (rank j where the
// ring is every rank in order). Ranks may start with more than their own
// block (after a scatter, a rank holds its whole subtree's).
class RingAllgatherLayout {
 public:
  virtual ~RingAllgatherLayout() = default;
  // Where block j ends up in every rank's output.
  virtual Range block(int j) const = 0;
  // Whether `rank` holds block j before the ring starts (every rank holds
  // its own block), and where it keeps it then.
  virtual bool holds(int rank, int j) const = 0;
  virtual Slot origin(int rank, int j) const = 0;
  // The scratch where `rank` receives block j when it does not hold it.
  virtual Slot landing(int rank, int j) const = 0;
};

// Appends m-1 rounds over the ring of m ranks (`ring`, in ring order; empty:
// every rank, 0 to P-1): in round k the ring's q-th rank puts block q-k (mod
// m) into the landing of the next unless that one holds the block already,
// and the receiver copies it into its output. A rank forwards a block from
// where it keeps it, so a receiver's output copy is never on the critical
// path. Copying the blocks a rank starts with into its output is left to the
// caller (where in program order that is safe depends on in-place aliasing).
void ring_allgather_phase(Builder& b, const RingAllgatherLayout& layout, const std::vector<int>& ring = {});

}  // namespace earlybird::coll::detail
