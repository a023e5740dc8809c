#include "trees.hpp"

#include <earlybird/collectives/partition.hpp>

#include <algorithm>
#include <bit>

namespace earlybird::coll::detail {
namespace {

// Rank r's subtree spans `span` ranks starting at r (before clipping to P).
int binomial_span(int rank, int ranks) {
  if (rank == 0) return static_cast<int>(std::bit_ceil(static_cast<unsigned>(ranks)));
  return rank & -rank;
}

}  // namespace

Tree binomial_tree(int ranks) {
  Tree tree{std::vector<std::vector<int>>(static_cast<std::size_t>(ranks))};
  for (int r = 0; r < ranks; ++r)
    for (int half = binomial_span(r, ranks) / 2; half >= 1; half /= 2)
      if (r + half < ranks) tree.children[static_cast<std::size_t>(r)].push_back(r + half);
  return tree;
}

int binomial_subtree_end(int rank, int ranks) { return std::min(rank + binomial_span(rank, ranks), ranks); }

void tree_bcast_phase(Builder& b, Buffer source, const Tree& tree, std::size_t segment_elems) {
  for (const Range seg : segments({0, b.count()}, segment_elems)) {
    for (int r = 0; r < b.ranks(); ++r) {
      const Slot held = r == 0 ? Slot{0, source, seg} : Slot{r, Buffer::scratch, seg};
      for (const int child : tree.children[static_cast<std::size_t>(r)]) {
        const Slot landing{child, Buffer::scratch, seg};
        b.put(held, landing);
        b.copy({child, Buffer::output, seg}, landing);
      }
    }
  }
  copy_root_output(b, source);
}

void copy_root_output(Builder& b, Buffer source) {
  if (source == Buffer::input) b.copy({0, Buffer::output, {0, b.count()}}, {0, Buffer::input, {0, b.count()}});
}

}  // namespace earlybird::coll::detail
