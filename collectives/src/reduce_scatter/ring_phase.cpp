// The ring reduce-scatter phase of ring_phase.hpp.
#include "ring_phase.hpp"

#include "../schedule/ring_positions.hpp"

namespace earlybird::coll::detail {
namespace {

int ring_mod(int value, int m) { return ((value % m) + m) % m; }

}  // namespace

void ring_reduce_scatter_phase(Builder& b, const RingReduceLayout& layout, const std::vector<int>& ring) {
  const int m = ring.empty() ? b.ranks() : static_cast<int>(ring.size());
  auto member = [&](int q) {
    const int position = ring_mod(q, m);
    return ring.empty() ? position : ring[static_cast<std::size_t>(position)];
  };
  const std::vector<int> positions = sending_positions_touching_kept(b, m, member);
  for (int k = 0; k + 1 < m; ++k) {
    for (int q : positions) {
      const int r = member(q);
      const Slot partial = k == 0 ? layout.contribution(r, ring_mod(q - 1, m)) : layout.landing(r, k - 1);
      b.put(partial, layout.landing(member(q + 1), k));
    }
    for (int q : positions) {
      const int r = member(q);
      if (!b.keeps(r)) continue;  // a focused build drops it (the sender before a kept rank)
      const Slot landing = layout.landing(r, k);
      const Slot sum = k == m - 2 ? layout.result(r) : landing;
      b.reduce(sum, layout.contribution(r, ring_mod(q - 2 - k, m)), landing);
    }
  }
}

}  // namespace earlybird::coll::detail
