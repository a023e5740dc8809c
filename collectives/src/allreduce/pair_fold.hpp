// Internal: the fold that runs a power-of-two butterfly on any P and keeps
// rank order, shared by recursive_doubling_halves and rabenseifner.
//
// With P' = 2^floor(log2 P) and e = P - P', the first 2e ranks pair up: rank
// 2i hands its input to rank 2i+1 (fold in), which combines the two in rank
// order and takes part in the butterfly as core rank i; rank 2i sits out and
// gets the result back from 2i+1 at the end (fold out). Ranks 2e..P-1 are core
// ranks r - e. Core rank c therefore holds the contributions of a contiguous
// run of real ranks, and a block of consecutive core ranks a contiguous run
// too, so a butterfly that puts the lower block on the left keeps rank order
// (non-commutative operators work).
//
//   P = 6 (P' = 4, e = 2):  real 0 1 | 2 3 | 4 | 5
//                           core   0 |   1 | 2 | 3
#pragma once

#include <earlybird/collectives/builder.hpp>

#include <cstddef>

namespace earlybird::coll::detail {

class PairFold {
 public:
  explicit PairFold(int ranks);

  int core() const { return core_; }      // P'
  int extra() const { return extra_; }    // e = P - P'
  int rounds() const { return rounds_; }  // log2 P'
  // The real rank that plays core rank `core_rank` in the butterfly.
  int real_rank(int core_rank) const;
  // Whether core rank `core_rank` combined a folded-out rank's input first.
  bool took_fold(int core_rank) const { return core_rank < extra_; }
  // Where a core rank's vector is once the fold is in: the output of a rank
  // that took a fold, the untouched input otherwise.
  Buffer vector_buffer(int core_rank) const { return took_fold(core_rank) ? Buffer::output : Buffer::input; }

  // Rank 2i puts its input into scratch [offset, offset + count) of rank
  // 2i+1, which reduces output = that scratch (op) its own input.
  void fold_in(Builder& b, std::size_t scratch_offset) const;
  // Rank 2i+1 puts its output (the result) into scratch [0, count) of rank
  // 2i, which copies it to its output. Rank 2i uses no other scratch.
  void fold_out(Builder& b) const;

 private:
  int core_;
  int extra_;
  int rounds_;
};

}  // namespace earlybird::coll::detail
