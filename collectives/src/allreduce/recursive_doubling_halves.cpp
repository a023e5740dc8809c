// allreduce_recursive_doubling_halves — the butterfly of recursive doubling
// with the reduction split between the partners: in round k, rank r and its
// partner r XOR 2^k each hand the other the half of the vector the other
// reduces (the lower partner reduces the lower half, the upper partner the
// upper half), reduce their half, then swap the reduced halves.
//
// Cost (Hockney, m bytes per rank, P a power of two):
//   log2 P (2 alpha + beta m + gamma m / 2)
//   per rank: 2 log2 P puts, log2 P * count elements sent, and per round one
//   half reduced: ceil(count/2) in the rounds where the rank is the lower
//   partner, floor(count/2) where it is the upper; rounds 2 log2 P.
// Against recursive_doubling: half the reduction work, twice the latency
// terms, the same bytes on the wire.
//
// Any P: the adjacent fold (../topology/fold.hpp). With P' = 2^floor(log2 P) and
// e = P - P', rank 2i (i < e) hands its input to rank 2i+1 first and gets the
// result back at the end: + 2(alpha + beta m) + gamma m, two more rounds; rank
// 2i+1 does one more put, count more elements sent and reduced; rank 2i does
// one put of count elements and reduces nothing.
//
// Limitations: none on the operator: partners always put the lower block of
// ranks on the left and the fold keeps blocks contiguous, so rank order holds
// (non-commutative operators work). Scratch: one vector per round, never
// reused (log2 P' vectors, one more on a rank that takes a fold); vectors
// larger than the window run in batches (runtime).
//
// State for P = 4 (sets of ranks each holds; L, U the lower and upper half):
//   step             rank 0     rank 1     rank 2     rank 3
//   start            {0}        {1}        {2}        {3}
//   k=0 reduce       L:{0,1}    U:{0,1}    L:{2,3}    U:{2,3}
//   k=0 swap         {0,1}      {0,1}      {2,3}      {2,3}
//   k=1 reduce       L:{0-3}    L:{0-3}    U:{0-3}    U:{0-3}
//   k=1 swap         {0-3}      {0-3}      {0-3}      {0-3}
// For P = 6 ranks 0 and 2 fold into ranks 1 and 3 first (../topology/fold.hpp).
#include "../topology/fold.hpp"

#include <earlybird/collectives/allreduce.hpp>
#include <earlybird/collectives/partition.hpp>

#include <array>
#include <vector>

namespace earlybird::coll {
namespace {

constexpr int kLower = 0;
constexpr int kUpper = 1;

// The butterfly over core ranks, tracking where each core rank's two halves
// live: its input, its output, or the scratch slot they were last received in.
class HalvesButterfly {
 public:
  HalvesButterfly(Builder& b, const detail::Fold& fold)
      : b_(b), fold_(fold), half_{chunk(b.count(), 2, kLower), chunk(b.count(), 2, kUpper)} {
    for (int c = 0; c < fold.core(); ++c)
      where_.push_back({slot_of(c, fold.vector_buffer(c), kLower), slot_of(c, fold.vector_buffer(c), kUpper)});
  }

  void round(int k) {
    const int core = fold_.core();
    for (int c = 0; c < core; ++c) hand_over(c, k, half_reduced_by(c ^ (1 << k), k));
    for (int c = 0; c < core; ++c) reduce_own_half(c, k);
    for (int c = 0; c < core; ++c) hand_over(c, k, half_reduced_by(c, k));
    for (int c = 0; c < core; ++c) {  // what came back is the rank's other half
      const int theirs = half_reduced_by(c ^ (1 << k), k);
      where(c, theirs) = landing(c, k, theirs);
    }
  }

  // Copies every half still held in scratch into the output.
  void settle() {
    for (int c = 0; c < fold_.core(); ++c)
      for (int h : {kLower, kUpper})
        if (where(c, h).buffer == Buffer::scratch) b_.copy(slot_of(c, Buffer::output, h), where(c, h));
  }

 private:
  static int half_reduced_by(int core_rank, int k) { return (core_rank >> k) & 1; }

  // Core rank c puts its copy of `half` into its round-k partner's scratch:
  // first the half the partner reduces, then, reduced, its own.
  void hand_over(int c, int k, int half) {
    const int partner = c ^ (1 << k);
    b_.put(where(c, half), landing(partner, k, half));
  }

  // The lower block of ranks goes on the left: rank order is kept.
  void reduce_own_half(int c, int k) {
    const int mine = half_reduced_by(c, k);
    const Slot received = landing(c, k, mine);
    const Slot result = slot_of(c, Buffer::output, mine);
    if (mine == kLower)
      b_.reduce(result, where(c, mine), received);
    else
      b_.reduce(result, received, where(c, mine));
    where(c, mine) = result;
  }

  Slot slot_of(int core_rank, Buffer buffer, int half) const {
    return {fold_.real_rank(core_rank), buffer, half_[half]};
  }
  // Round k receives into scratch vector slot k, each half at its own offset.
  Slot landing(int core_rank, int k, int half) const {
    const Range range = half_[half];
    return {fold_.real_rank(core_rank), Buffer::scratch,
            {static_cast<std::size_t>(k) * b_.count() + range.begin, range.count}};
  }
  Slot& where(int core_rank, int half) { return where_[static_cast<std::size_t>(core_rank)][static_cast<std::size_t>(half)]; }

  Builder& b_;
  const detail::Fold& fold_;
  std::array<Range, 2> half_;
  std::vector<std::array<Slot, 2>> where_;
};

}  // namespace

Schedule allreduce_recursive_doubling_halves(int ranks, std::size_t count) {
  Builder b("allreduce_recursive_doubling_halves", ranks, count);
  const detail::Fold fold(ranks, detail::FoldPairing::adjacent);
  fold.fold_in(b, static_cast<std::size_t>(fold.rounds()) * count);  // scratch slot after the rounds'
  HalvesButterfly butterfly(b, fold);
  for (int k = 0; k < fold.rounds(); ++k) butterfly.round(k);
  butterfly.settle();
  fold.fold_out(b);
  b.copy_unwritten_output();  // P = 1: output = input
  return std::move(b).finish();
}

}  // namespace earlybird::coll
