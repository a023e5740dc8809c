// Internal: the fold that lets a power-of-two butterfly run on any P, shared
// by every butterfly (allreduce recursive_doubling, recursive_doubling_halves
// and rabenseifner, allgather recursive_doubling, reduce_scatter
// recursive_halving).
//
// With P' = 2^floor(log2 P) core ranks and e = P - P' extra ranks, e ranks
// each hand their contribution to a partner first (fold in) and sit out; the
// butterfly runs over the P' core ranks; at the end each partner hands the
// result back (fold out). Core rank c < e is the one that took a fold. Two
// pairings:
//
//   adjacent  rank 2i folds into rank 2i+1 (i < e); ranks 2e..P-1 are core
//             ranks r - e. Core rank c holds a contiguous run of real ranks,
//             and a block of consecutive core ranks a contiguous run too, so
//             a butterfly that puts the lower block on the left keeps rank
//             order (non-commutative operators work).
//   upper     rank P'+i folds into rank i; core rank c is real rank c. Core
//             rank q answers for its *super-block*: block q and, for q < e,
//             block P'+q (super_blocks()). Needs a commutative operator.
//
//   P = 6 (P' = 4, e = 2):  adjacent: real 0 1 | 2 3 | 4 | 5   upper: real 0 4 | 1 5 | 2 | 3
//                                     core   0 |   1 | 2 | 3               core   0 |   1 | 2 | 3
#pragma once

#include <earlybird/collectives/builder.hpp>

#include <cstddef>

namespace earlybird::coll::detail {

enum class FoldPairing { adjacent, upper };

// The blocks of a run of super-blocks, as two runs of block numbers.
struct BlockRuns {
  int core_first, core_count;    // blocks [core_first, core_first + core_count)
  int extra_first, extra_count;  // blocks [extra_first, extra_first + extra_count)
};

class Fold {
 public:
  Fold(int ranks, FoldPairing pairing);

  int core() const { return core_; }      // P'
  int extra() const { return extra_; }    // e = P - P'
  int rounds() const { return rounds_; }  // log2 P'
  // The real rank that plays core rank `core_rank` in the butterfly.
  int real_rank(int core_rank) const;
  // Whether core rank `core_rank` combined a folded-out rank's input first.
  bool took_fold(int core_rank) const { return core_rank < extra_; }
  // The real rank that folds into core rank `core_rank` (one that took a fold).
  int folded_rank(int core_rank) const;
  // Whether real rank `rank` folds into a core rank and sits the butterfly out.
  bool sits_out(int rank) const;
  // The real rank that a rank which sits out folds into.
  int folds_into(int rank) const;
  // Where a core rank's vector is once the fold is in: the output of a rank
  // that took a fold, the untouched input otherwise.
  Buffer vector_buffer(int core_rank) const { return took_fold(core_rank) ? Buffer::output : Buffer::input; }

  // Whole vectors: every folded rank puts its input into scratch
  // [offset, offset + count) of its partner, which reduces output = the two
  // in rank order (the lower rank's on the left).
  void fold_in(Builder& b, std::size_t scratch_offset) const;
  // Every partner puts its output (the result) into scratch [0, count) of
  // its folded rank, which copies it to its output. A folded rank uses no
  // other scratch.
  void fold_out(Builder& b) const;

  // The upper pairing's blocks of super-blocks [first, first + size): two
  // runs, each contiguous in a block-ordered buffer.
  BlockRuns super_blocks(int first, int size) const;

 private:
  int core_;
  int extra_;
  int rounds_;
  FoldPairing pairing_;
};

}  // namespace earlybird::coll::detail
