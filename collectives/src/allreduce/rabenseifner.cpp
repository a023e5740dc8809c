// allreduce_rabenseifner — reduce-scatter by recursive vector halving and
// distance doubling, then allgather by recursive vector doubling and distance
// halving (Rabenseifner; Thakur, Rabenseifner & Gropp 2005).
//
// The vector is cut into P' balanced chunks. Reduce-scatter round k = 0..l-1
// (l = log2 P'): rank r and its partner r XOR 2^k hold the same run of
// chunks; the lower partner keeps the lower half of the run, the upper
// partner the upper half; each puts the half it gives away into the other's
// scratch and reduces the half it keeps. After l rounds core rank r holds
// chunk bitreverse(r) fully reduced. Allgather round k = l-1..0: partners put
// the runs they hold into each other's scratch and copy what they receive
// into their output, doubling the run.
//
// Cost (Hockney, m bytes per rank, P a power of two):
//   2 log2 P alpha + 2((P-1)/P) beta m + ((P-1)/P) gamma m
//   per rank, P dividing count: 2 log2 P puts, 2((P-1)/P) count elements
//   sent, ((P-1)/P) count reduced; rounds 2 log2 P.
// Latency and bandwidth optimal for powers of two.
//
// Any P: the adjacent fold (../topology/fold.hpp): rank 2i (i < e = P - P') hands its
// input to rank 2i+1 first and gets the result back at the end:
// + 2(alpha + beta m) + gamma m and two more rounds; rank 2i+1 does one more
// put, count more elements sent and reduced; rank 2i does one put of count
// elements and reduces nothing. Every element is reduced P-1 times in all.
//
// Limitations: none on the operator: the lower partner's block of ranks goes
// on the left and the fold keeps blocks contiguous, so rank order holds
// (non-commutative operators work). Scratch, never reused: [0, count) for
// the allgather, [count, 2 count) for a fold, then the reduce-scatter rounds
// packed (under count in all); vectors larger than the window run in batches
// (runtime). Chunks may be empty (count < P'); their steps are dropped.
//
// State for P = 4 (chunks c0..c3; sets of ranks reduced in):
//   round           rank 0        rank 1        rank 2        rank 3
//   start           {0}           {1}           {2}           {3}
//   rs k=0 (xor 1)  c0,c1:{0,1}   c2,c3:{0,1}   c0,c1:{2,3}   c2,c3:{2,3}
//   rs k=1 (xor 2)  c0:{0-3}      c2:{0-3}      c1:{0-3}      c3:{0-3}
//   ag k=1 (xor 2)  c0,c1         c2,c3         c0,c1         c2,c3
//   ag k=0 (xor 1)  c0-c3         c0-c3         c0-c3         c0-c3
// For P = 6 ranks 0 and 2 fold into ranks 1 and 3 first (../topology/fold.hpp).
#include "../topology/fold.hpp"

#include <earlybird/collectives/allreduce.hpp>
#include <earlybird/collectives/partition.hpp>

#include <algorithm>
#include <vector>

namespace earlybird::coll {
namespace {

// A run of consecutive chunks [first, last) of the P' chunks.
struct ChunkRun {
  int first = 0;
  int last = 0;

  ChunkRun half(bool upper) const {
    const int middle = first + (last - first) / 2;
    return upper ? ChunkRun{middle, last} : ChunkRun{first, middle};
  }
  ChunkRun joined(const ChunkRun& other) const {
    return {std::min(first, other.first), std::max(last, other.last)};
  }
};

class Rabenseifner {
 public:
  Rabenseifner(Builder& b, const detail::Fold& fold)
      : b_(b),
        fold_(fold),
        held_(static_cast<std::size_t>(fold.core()), ChunkRun{0, fold.core()}),
        halving_used_(static_cast<std::size_t>(fold.core()), 0) {
    for (int c = 0; c < fold.core(); ++c) vector_in_.push_back(fold.vector_buffer(c));
  }

  void halving_round(int k) {
    const int core = fold_.core();
    for (int c = 0; c < core; ++c) {  // give the partner the half it keeps
      const int partner = c ^ (1 << k);
      if (!kept(c) && !kept(partner)) continue;  // a per-rank plan's builder drops it anyway
      b_.put(slot(c, vector_in_[at(c)], kept_by(partner, k)), halving_landing(partner, kept_by(partner, k)));
    }
    for (int c = 0; c < core; ++c) reduce_kept_half(c, k);
  }

  void doubling_round(int k) {
    const int core = fold_.core();
    for (int c = 0; c < core; ++c)
      if (kept(c) || kept(c ^ (1 << k)))
        b_.put(slot(c, Buffer::output, held_[at(c)]), doubling_landing(c ^ (1 << k), held_[at(c)]));
    for (int c = 0; c < core; ++c) {
      if (!kept(c)) continue;
      const ChunkRun received = held_[at(c ^ (1 << k))];
      b_.copy(slot(c, Buffer::output, received), doubling_landing(c, received));
    }
    std::vector<ChunkRun> joined(held_.size());
    for (int c = 0; c < core; ++c) joined[at(c)] = held_[at(c)].joined(held_[at(c ^ (1 << k))]);
    held_ = std::move(joined);
  }

 private:
  static std::size_t at(int core_rank) { return static_cast<std::size_t>(core_rank); }
  bool kept(int c) const { return b_.keeps(fold_.real_rank(c)); }

  // In round k the partner whose bit k is clear keeps the lower half.
  ChunkRun kept_by(int c, int k) const { return held_[at(c)].half(((c >> k) & 1) != 0); }

  // The lower block of ranks goes on the left: rank order is kept.
  void reduce_kept_half(int c, int k) {
    const ChunkRun kept = kept_by(c, k);
    if (!this->kept(c)) {  // only the bookkeeping: a per-rank plan leaves this rank out
      vector_in_[at(c)] = Buffer::output;
      held_[at(c)] = kept;
      return;
    }
    const Slot received = halving_landing(c, kept);
    const Slot own = slot(c, vector_in_[at(c)], kept);
    const Slot result = slot(c, Buffer::output, kept);
    if (((c >> k) & 1) == 0)
      b_.reduce(result, own, received);
    else
      b_.reduce(result, received, own);
    halving_used_[at(c)] += result.range.count;
    vector_in_[at(c)] = Buffer::output;
    held_[at(c)] = kept;
  }

  Range elements(const ChunkRun& run) const {
    if (run.first == run.last) return {};
    const Range first = chunk(b_.count(), fold_.core(), run.first);
    return {first.begin, chunk(b_.count(), fold_.core(), run.last - 1).end() - first.begin};
  }
  Slot slot(int c, Buffer buffer, const ChunkRun& run) const { return {fold_.real_rank(c), buffer, elements(run)}; }

  // Scratch layout of a core rank: [0, count) allgather, at natural offsets;
  // [count, 2 count) the fold (ranks that take one); then the halving rounds,
  // packed in the order they arrive.
  Slot doubling_landing(int c, const ChunkRun& run) const { return slot(c, Buffer::scratch, run); }
  Slot halving_landing(int c, const ChunkRun& run) const {
    const std::size_t base = b_.count() * (fold_.took_fold(c) ? 2 : 1);
    return {fold_.real_rank(c), Buffer::scratch, {base + halving_used_[at(c)], elements(run).count}};
  }

  Builder& b_;
  const detail::Fold& fold_;
  std::vector<ChunkRun> held_;               // chunks each core rank holds
  std::vector<std::size_t> halving_used_;    // scratch the halving rounds used so far
  std::vector<Buffer> vector_in_;            // input until the rank's first reduce
};

}  // namespace

// The scratch layout above: the allgather's `count`, the fold's `count`
// where there is one, and the halving rounds' kept halves, which hold at most
// P'/2 + P'/4 + ... + 1 = P' - 1 chunks; a flag per round of each phase, and
// one each for the fold in and out.
PlanBounds allreduce_rabenseifner_bounds(int ranks, std::size_t count) {
  if (ranks == 1) return {};
  const detail::Fold fold(ranks, detail::FoldPairing::adjacent);
  const std::size_t vectors = fold.extra() > 0 ? 2 : 1;
  const auto halving_chunks = static_cast<std::size_t>(fold.core() - 1);
  return {vectors * count + halving_chunks * max_chunk(count, fold.core()),
          static_cast<std::uint32_t>(2 * fold.rounds() + 2)};
}

Schedule allreduce_rabenseifner(int ranks, std::size_t count, const std::vector<int>& keep) {
  Builder b("allreduce_rabenseifner", ranks, count);
  b.keep_only(keep);
  const detail::Fold fold(ranks, detail::FoldPairing::adjacent);
  fold.fold_in(b, count);
  Rabenseifner butterfly(b, fold);
  for (int k = 0; k < fold.rounds(); ++k) butterfly.halving_round(k);
  for (int k = fold.rounds() - 1; k >= 0; --k) butterfly.doubling_round(k);
  fold.fold_out(b);
  b.copy_unwritten_output();  // P = 1: output = input
  return std::move(b).finish();
}

}  // namespace earlybird::coll
