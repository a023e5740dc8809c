#include "pair_fold.hpp"

#include <earlybird/collectives/partition.hpp>

#include <bit>

namespace earlybird::coll::detail {

PairFold::PairFold(int ranks)
    : core_(floor_pow2(ranks)),
      extra_(ranks - core_),
      rounds_(std::countr_zero(static_cast<unsigned>(core_))) {}

int PairFold::real_rank(int core_rank) const {
  return took_fold(core_rank) ? 2 * core_rank + 1 : core_rank + extra_;
}

void PairFold::fold_in(Builder& b, std::size_t scratch_offset) const {
  const std::size_t n = b.count();
  for (int i = 0; i < extra_; ++i) {
    const Slot landed{2 * i + 1, Buffer::scratch, {scratch_offset, n}};
    b.put({2 * i, Buffer::input, {0, n}}, landed);
    b.reduce({2 * i + 1, Buffer::output, {0, n}}, landed, {2 * i + 1, Buffer::input, {0, n}});
  }
}

void PairFold::fold_out(Builder& b) const {
  const std::size_t n = b.count();
  for (int i = 0; i < extra_; ++i) {
    const Slot landed{2 * i, Buffer::scratch, {0, n}};
    b.put({2 * i + 1, Buffer::output, {0, n}}, landed);
    b.copy({2 * i, Buffer::output, {0, n}}, landed);
  }
}

}  // namespace earlybird::coll::detail
