// Internal: the fold that lets a power-of-two butterfly serve any P, shared
// by allgather_recursive_doubling and reduce_scatter_recursive_halving.
//
// With P' = 2^floor(log2 P) core ranks and e = P - P' extra ranks, extra
// rank P'+i pairs with core rank i (i < e): the butterfly runs over the P'
// core ranks, and core rank q answers for its *super-block*: block q and, for
// q < e, block P'+q. A group of consecutive super-blocks [first, first+size)
// is then two runs of blocks, each contiguous in a block-ordered buffer.
#pragma once

#include <earlybird/collectives/partition.hpp>

#include <algorithm>

namespace earlybird::coll::detail {

struct BlockRuns {
  int core_first, core_count;    // blocks [core_first, core_first + core_count)
  int extra_first, extra_count;  // blocks [extra_first, extra_first + extra_count)
};

class FoldedBlocks {
 public:
  explicit FoldedBlocks(int ranks) : core_(floor_pow2(ranks)), extra_(ranks - core_) {}

  int core() const { return core_; }    // P'
  int extra() const { return extra_; }  // e
  bool is_extra(int rank) const { return rank >= core_; }
  bool takes_fold(int rank) const { return rank < extra_; }
  // Extra rank <-> its core partner.
  int partner(int rank) const { return is_extra(rank) ? rank - core_ : rank + core_; }

  // The blocks of super-blocks [first, first + size).
  BlockRuns runs(int first, int size) const {
    return {first, size, core_ + first, std::clamp(extra_ - first, 0, size)};
  }

 private:
  int core_;
  int extra_;
};

}  // namespace earlybird::coll::detail
