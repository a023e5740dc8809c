// The ring allgather phase of ring_phase.hpp.
#include "ring_phase.hpp"

#include "../schedule/ring_positions.hpp"

namespace earlybird::coll::detail {
namespace {

int ring_mod(int value, int p) { return ((value % p) + p) % p; }

Slot kept(const RingAllgatherLayout& layout, int rank, int j) {
  return layout.holds(rank, j) ? layout.origin(rank, j) : layout.landing(rank, j);
}

}  // namespace

void ring_allgather_phase(Builder& b, const RingAllgatherLayout& layout, const std::vector<int>& ring) {
  const int m = ring.empty() ? b.ranks() : static_cast<int>(ring.size());
  auto member = [&](int q) { return ring.empty() ? q : ring[static_cast<std::size_t>(q)]; };
  const std::vector<int> positions = sending_positions_touching_kept(b, m, member);
  for (int k = 0; k + 1 < m; ++k) {
    for (int q : positions) {
      const int r = member(q);
      const int next = member((q + 1) % m);
      const int j = ring_mod(q - k, m);
      if (layout.holds(next, j)) continue;
      const Slot landing = layout.landing(next, j);
      b.put(kept(layout, r, j), landing);
      b.copy({next, Buffer::output, layout.block(j)}, landing);
    }
  }
}

}  // namespace earlybird::coll::detail
