// Internal: which positions of a ring a (possibly focused) build must visit.
#pragma once

#include <earlybird/collectives/builder.hpp>

#include <vector>

namespace earlybird::coll::detail {

// The positions q of a ring of m ranks (member(q) sends to member(q + 1 mod
// m)) whose sends touch a kept rank's memory (Builder::keep_only): each kept
// member's own and the one before it, in increasing order; every position
// when the builder keeps every rank. A ring phase that visits only these,
// round after round, appends the steps a focused build keeps in their program
// order, in O(kept ranks) per round instead of O(m).
template <class Member>
std::vector<int> sending_positions_touching_kept(const Builder& b, int m, Member member) {
  std::vector<char> visit(static_cast<std::size_t>(m), 0);
  for (int q = 0; q < m; ++q)
    if (b.keeps(member(q))) visit[static_cast<std::size_t>(q)] = visit[static_cast<std::size_t>((q + m - 1) % m)] = 1;
  std::vector<int> positions;
  for (int q = 0; q < m; ++q)
    if (visit[static_cast<std::size_t>(q)]) positions.push_back(q);
  return positions;
}

}  // namespace earlybird::coll::detail
