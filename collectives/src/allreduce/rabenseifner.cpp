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
};

// What each core rank holds follows from its bits alone, so the rounds
// compute it per rank (run_after, halving_used) instead of tracking every
// rank: a per-rank plan visits only its kept ranks and their partners.
class Rabenseifner {
 public:
  Rabenseifner(Builder& b, const detail::Fold& fold) : b_(b), fold_(fold) {
    for (int c = 0; c < fold.core(); ++c)
      if (kept(c)) kept_core_.push_back(c);
  }

  void halving_round(int k) {
    for (int c : visited(k)) {  // give the partner the half it keeps
      const int partner = c ^ (1 << k);
      const ChunkRun kept = run_after(partner, k + 1);
      b_.put(slot(c, vector_in(c, k), kept), halving_landing(partner, k, kept));
    }
    for (int c : kept_core_) reduce_kept_half(c, k);
  }

  void doubling_round(int k) {
    for (int c : visited(k)) {
      const ChunkRun held = run_after(c, k + 1);
      b_.put(slot(c, Buffer::output, held), doubling_landing(c ^ (1 << k), held));
    }
    for (int c : kept_core_) {
      const ChunkRun received = run_after(c ^ (1 << k), k + 1);
      b_.copy(slot(c, Buffer::output, received), doubling_landing(c, received));
    }
  }

 private:
  bool kept(int c) const { return b_.keeps(fold_.real_rank(c)); }

  // The core ranks with a step in round k: the kept ones and their partners,
  // ascending (every core rank in a whole build).
  std::vector<int> visited(int k) const {
    std::vector<int> ranks;
    for (int c : kept_core_) {
      ranks.push_back(c);
      if (!kept(c ^ (1 << k))) ranks.push_back(c ^ (1 << k));
    }
    std::sort(ranks.begin(), ranks.end());
    return ranks;
  }

  // The run core rank c holds after `rounds` halving rounds, which is also
  // what it holds before allgather round rounds - 1. In round j the partner
  // whose bit j is clear keeps the lower half.
  ChunkRun run_after(int c, int rounds) const {
    ChunkRun run{0, fold_.core()};
    for (int j = 0; j < rounds; ++j) run = run.half(((c >> j) & 1) != 0);
    return run;
  }
  // The halving rounds before round k landed that much in c's scratch.
  std::size_t halving_used(int c, int k) const {
    std::size_t used = 0;
    for (int j = 0; j < k; ++j) used += elements(run_after(c, j + 1)).count;
    return used;
  }
  // The input until the rank's first reduce, then its output.
  Buffer vector_in(int c, int k) const { return k == 0 ? fold_.vector_buffer(c) : Buffer::output; }

  void reduce_kept_half(int c, int k) {
    const ChunkRun kept = run_after(c, k + 1);
    const Slot received = halving_landing(c, k, kept);
    const Slot own = slot(c, vector_in(c, k), kept);
    const Slot result = slot(c, Buffer::output, kept);
    // The lower block of ranks goes on the left: rank order is kept.
    if (((c >> k) & 1) == 0)
      b_.reduce(result, own, received);
    else
      b_.reduce(result, received, own);
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
  Slot halving_landing(int c, int k, const ChunkRun& run) const {
    const std::size_t base = b_.count() * (fold_.took_fold(c) ? 2 : 1);
    return {fold_.real_rank(c), Buffer::scratch, {base + halving_used(c, k), elements(run).count}};
  }

  Builder& b_;
  const detail::Fold& fold_;
  std::vector<int> kept_core_;  // ascending
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
