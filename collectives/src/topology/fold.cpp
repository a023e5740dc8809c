// The fold of fold.hpp.
#include "fold.hpp"

#include <earlybird/collectives/partition.hpp>

#include <algorithm>
#include <bit>
#include <stdexcept>

namespace earlybird::coll::detail {

Fold::Fold(int ranks, FoldPairing pairing)
    : core_(floor_pow2(ranks)),
      extra_(ranks - core_),
      rounds_(std::countr_zero(static_cast<unsigned>(core_))),
      pairing_(pairing) {}

int Fold::real_rank(int core_rank) const {
  if (pairing_ == FoldPairing::upper) return core_rank;
  return took_fold(core_rank) ? 2 * core_rank + 1 : core_rank + extra_;
}

int Fold::folded_rank(int core_rank) const {
  return pairing_ == FoldPairing::upper ? core_ + core_rank : 2 * core_rank;
}

bool Fold::sits_out(int rank) const {
  if (pairing_ == FoldPairing::upper) return rank >= core_;
  return rank < 2 * extra_ && rank % 2 == 0;
}

int Fold::folds_into(int rank) const { return pairing_ == FoldPairing::upper ? rank - core_ : rank + 1; }

void Fold::fold_in(Builder& b, std::size_t scratch_offset) const {
  const std::size_t n = b.count();
  for (int c = 0; c < extra_; ++c) {
    const int taker = real_rank(c);
    const int folded = folded_rank(c);
    const Slot landed{taker, Buffer::scratch, {scratch_offset, n}};
    const Slot own{taker, Buffer::input, {0, n}};
    b.put({folded, Buffer::input, {0, n}}, landed);
    if (folded < taker)
      b.reduce({taker, Buffer::output, {0, n}}, landed, own);
    else
      b.reduce({taker, Buffer::output, {0, n}}, own, landed);
  }
}

void Fold::fold_out(Builder& b) const {
  const std::size_t n = b.count();
  for (int c = 0; c < extra_; ++c) {
    const Slot landed{folded_rank(c), Buffer::scratch, {0, n}};
    b.put({real_rank(c), Buffer::output, {0, n}}, landed);
    b.copy({folded_rank(c), Buffer::output, {0, n}}, landed);
  }
}

BlockRuns Fold::super_blocks(int first, int size) const {
  if (pairing_ != FoldPairing::upper) throw std::logic_error("Fold::super_blocks: only the upper pairing has them");
  return {first, size, core_ + first, std::clamp(extra_ - first, 0, size)};
}

}  // namespace earlybird::coll::detail
