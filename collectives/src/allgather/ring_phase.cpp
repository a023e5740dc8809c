// The ring allgather phase of ring_phase.hpp.
#include "ring_phase.hpp"

namespace earlybird::coll::detail {
namespace {

int ring_mod(int value, int p) { return ((value % p) + p) % p; }

Slot kept(const RingAllgatherLayout& layout, int rank, int j) {
  return layout.holds(rank, j) ? layout.origin(rank, j) : layout.landing(rank, j);
}

}  // namespace

void ring_allgather_phase(Builder& b, const RingAllgatherLayout& layout) {
  const int p = b.ranks();
  for (int k = 0; k + 1 < p; ++k) {
    for (int r = 0; r < p; ++r) {
      const int next = (r + 1) % p;
      const int j = ring_mod(r - k, p);
      if (layout.holds(next, j)) continue;
      const Slot landing = layout.landing(next, j);
      b.put(kept(layout, r, j), landing);
      b.copy({next, Buffer::output, layout.block(j)}, landing);
    }
  }
}

}  // namespace earlybird::coll::detail
