// allreduce_ring — reduce-scatter around a ring, then allgather around it.
//
// Cost (Hockney, m bytes per rank):
//   2(P-1) alpha + 2((P-1)/P) beta m + ((P-1)/P) gamma m
//   per rank r: 2(P-1) puts, 2 count - |c(r+1)| - |c(r+2)| elements sent
//   (2((P-1)/P) count when P divides count), rounds 2(P-1).
// Bandwidth-optimal; latency grows linearly in P, so it loses to recursive
// doubling for small vectors.
//
// Limitations:
//   - needs a commutative op: chunk c is combined starting at rank c, in ring
//     order c, c+1, ..., c-1, which is not rank order for c > 0.
//   - scratch: 2(P-1) chunk slots per rank (no slot reuse, so no acknowledgement
//     flags); vectors larger than the window run in batches (runtime).
//   - count < P leaves some chunks empty; their steps are dropped.
//
// Schedule (virtual ranks, P chunks c0..c(P-1), next = r+1 mod P):
//   reduce-scatter round k = 0..P-2: r puts chunk (r-k) to next's scratch slot k,
//     next combines it with its own input chunk into its output chunk (round 0
//     sends from input: no copy of input to output first);
//   allgather round k = 0..P-2: r puts chunk (r+1-k) to next's scratch slot
//     k of a second scratch region (above the first phase's), next copies it
//     into its output chunk.
// The two phases also run on their own around any ring of ranks (the
// hierarchical allreduce runs them inside each node, ring_phases.hpp).
//
// Per-rank plans (ring_allreduce_rank_plan, below): every rank's steps and
// dependencies follow from the round number alone, so one rank's plan is
// written in O(its own steps) without the Builder: at P = 16384 the Builder's
// hazard tracking over the rank's neighbourhood took ~0.6 s, this takes ms.
// Its dependencies, derived once by hand from the Builder's hazard rules and
// checked against the projection of the whole schedule by the unit tests:
//   rs put k      after rs reduce k-1 (k >= 1: it sends that reduce's chunk)
//   rs reduce k   after prev's rs put k (flag)
//   ag put k      after rs reduce P-2 (k = 0: the fully reduced chunk) or
//                 ag copy k-1 (k >= 1: it forwards that copy's chunk)
//   ag copy k     after prev's ag put k (flag), rs put k (write after read:
//                 that put read the chunk it overwrites; for k = 0 the input
//                 chunk, which an in-place call shares), rs reduce k-1 (k >= 1:
//                 write after write)
//
// State for P = 4 (what each rank holds after the round; "c1:1-3" = chunk 1
// reduced over ranks 1..3 in ring order):
//   round      rank 0     rank 1     rank 2     rank 3
//   rs k=0     c3:3,0     c0:0,1     c1:1,2     c2:2,3
//   rs k=1     c2:2-0     c3:3-1     c0:0-2     c1:1-3
//   rs k=2     c1:all     c2:all     c3:all     c0:all
//   ag k=0     +c0        +c1        +c2        +c3
//   ag k=1     +c3        +c0        +c1        +c2
//   ag k=2     +c2        +c3        +c0        +c1   (every rank: all chunks)
#include "ring_phases.hpp"

#include "../schedule/plan_writer.hpp"

#include <earlybird/collectives/allreduce.hpp>
#include <earlybird/collectives/partition.hpp>

#include <algorithm>
#include <array>

namespace earlybird::coll {
namespace detail {
namespace {

int ring_mod(int value, int p) { return ((value % p) + p) % p; }

// The chunk ring position i sends in round k of each phase.
int reduce_scatter_chunk(int i, int k, int n) { return ring_mod(i - k, n); }
int allgather_chunk(int i, int k, int n) { return ring_mod(i + 1 - k, n); }

// Who sends what in one ring round: every ring position i sends chunk
// chunk_of(i) to position i+1, into scratch slot `slot`.
struct RingRound {
  int slot;
  bool first;   // reduce-scatter round 0: the sender's chunk is still its input
  bool reduce;  // false: the allgather (the receiver copies)
};

template <class ChunkOf>
void ring_round(Builder& b, const std::vector<int>& ring, std::size_t segment_elems, RingRound round,
                ChunkOf chunk_of) {
  const int n = static_cast<int>(ring.size());
  const std::size_t slot_elems = max_chunk(b.count(), n);
  const Buffer sent_from = round.first ? Buffer::input : Buffer::output;
  for (int i = 0; i < n; ++i) {
    const int r = ring[static_cast<std::size_t>(i)];
    const int next = ring[static_cast<std::size_t>((i + 1) % n)];
    const Range whole = chunk(b.count(), n, chunk_of(i));
    for (const Range seg : segments(whole, segment_elems)) {
      const Slot scratch{next, Buffer::scratch,
                         {static_cast<std::size_t>(round.slot) * slot_elems + (seg.begin - whole.begin), seg.count}};
      const Slot out{next, Buffer::output, seg};
      b.put({r, sent_from, seg}, scratch);
      // A rank receives each chunk at most once while reducing, so its output
      // chunk is still unwritten: combine with its input directly.
      if (round.reduce)
        b.reduce(out, {next, Buffer::input, seg}, scratch);
      else
        b.copy(out, scratch);
    }
  }
}

}  // namespace

void ring_reduce_scatter_phase(Builder& b, const std::vector<int>& ring, std::size_t segment_elems) {
  const int n = static_cast<int>(ring.size());
  for (int k = 0; k < n - 1; ++k)
    ring_round(b, ring, segment_elems, {k, k == 0, true}, [&](int i) { return reduce_scatter_chunk(i, k, n); });
}

void ring_allgather_phase(Builder& b, const std::vector<int>& ring, std::size_t segment_elems) {
  const int n = static_cast<int>(ring.size());
  for (int k = 0; k < n - 1; ++k)
    ring_round(b, ring, segment_elems, {k, false, false},
               [&](int i) { return allgather_chunk(i, k, n); });
}

void ring_allreduce_phases(Builder& b, std::size_t segment_elems) {
  std::vector<int> ring(static_cast<std::size_t>(b.ranks()));
  for (int r = 0; r < b.ranks(); ++r) ring[static_cast<std::size_t>(r)] = r;
  ring_reduce_scatter_phase(b, ring, segment_elems);
  b.begin_scratch_region();
  ring_allgather_phase(b, ring, segment_elems);
  b.copy_unwritten_output();  // P = 1: output = input
}

namespace {

// Rank x's first scratch element of the allgather's region: one past the
// highest element the reduce-scatter's puts wrote there
// (Builder::begin_scratch_region; empty chunks write nothing).
std::size_t allgather_scratch_base(std::size_t count, int n, int x) {
  const std::size_t slot_elems = max_chunk(count, n);
  std::size_t base = 0;
  for (int k = 0; k < n - 1; ++k) {
    const Range received = chunk(count, n, reduce_scatter_chunk(x - 1, k, n));
    if (!received.empty()) base = std::max(base, static_cast<std::size_t>(k) * slot_elems + received.count);
  }
  return base;
}

// Writes rank r's steps of one ring allreduce; see the dependency table in
// this file's header. Round k's steps of each kind are indexed by segment
// from first_[kind][k].
class RingRankPlan {
 public:
  RingRankPlan(std::string algorithm, int n, std::size_t count, std::size_t segment_elems, int r)
      : w_(std::move(algorithm), r, n, count, {count, count}), n_(n), r_(r), prev_(ring_mod(r - 1, n)),
        next_(ring_mod(r + 1, n)), count_(count), segment_elems_(segment_elems), slot_elems_(max_chunk(count, n)) {
    for (auto& rounds : first_) rounds.assign(static_cast<std::size_t>(n), 0);
  }

  RankPlan write() && {
    if (n_ == 1) {  // copy_unwritten_output
      if (count_ > 0) w_.add(plan_copy(Buffer::output, {0, count_}, Buffer::input, {0, count_}));
      return std::move(w_).finish(0);
    }
    const std::size_t base_self = allgather_scratch_base(count_, n_, r_);
    const std::size_t base_next = allgather_scratch_base(count_, n_, next_);
    for (int k = 0; k < n_ - 1; ++k)
      in_ring_order([&] { reduce_scatter_receive(k); }, [&] { reduce_scatter_send(k); });
    for (int k = 0; k < n_ - 1; ++k)
      in_ring_order([&] { allgather_receive(k, base_self); }, [&] { allgather_send(k, base_next); });
    return std::move(w_).finish(flags_in_);
  }

 private:
  enum Kind { rs_put, rs_reduce, ag_put, ag_copy, kinds };

  // Program order within a round: ring positions in increasing order, the
  // receiving step listed with its sender's position.
  template <class Receive, class Send>
  void in_ring_order(Receive receive, Send send) {
    if (prev_ < r_) {
      receive();
      send();
    } else {
      send();
      receive();
    }
  }

  // Calls f(segment, offset in the chunk, segment index) for the chunk's
  // segments; the chunk's steps of `kind` in round k start at the next step.
  template <class F>
  void each_segment(Kind kind, int k, int chunk_index, F f) {
    first_[kind][static_cast<std::size_t>(k)] = static_cast<std::uint32_t>(w_.steps_written());
    const Range whole = chunk(count_, n_, chunk_index);
    std::uint32_t s = 0;
    for (const Range seg : segments(whole, segment_elems_)) f(seg, seg.begin - whole.begin, s++);
  }
  std::uint32_t step(Kind kind, int k, std::uint32_t segment) const {
    return first_[kind][static_cast<std::size_t>(k)] + segment;
  }
  Range slot(std::size_t base, int k, std::size_t offset, std::size_t elems) const {
    return {base + static_cast<std::size_t>(k) * slot_elems_ + offset, elems};
  }

  void reduce_scatter_send(int k) {
    each_segment(rs_put, k, reduce_scatter_chunk(r_, k, n_), [&](Range seg, std::size_t off, std::uint32_t s) {
      w_.add(plan_put(next_, k == 0 ? Buffer::input : Buffer::output, seg, slot(0, k, off, seg.count)));
      if (k > 0) w_.after(step(rs_reduce, k - 1, s));
      w_.raise(next_, flags_out_++);
    });
  }
  void reduce_scatter_receive(int k) {
    each_segment(rs_reduce, k, reduce_scatter_chunk(prev_, k, n_), [&](Range seg, std::size_t off, std::uint32_t) {
      w_.add(plan_reduce(Buffer::output, seg, Buffer::input, seg, Buffer::scratch, slot(0, k, off, seg.count)));
      w_.after_flag(flags_in_++, prev_);
    });
  }
  void allgather_send(int k, std::size_t base_next) {
    each_segment(ag_put, k, allgather_chunk(r_, k, n_), [&](Range seg, std::size_t off, std::uint32_t s) {
      w_.add(plan_put(next_, Buffer::output, seg, slot(base_next, k, off, seg.count)));
      w_.after(k == 0 ? step(rs_reduce, n_ - 2, s) : step(ag_copy, k - 1, s));
      w_.raise(next_, flags_out_++);
    });
  }
  void allgather_receive(int k, std::size_t base_self) {
    each_segment(ag_copy, k, allgather_chunk(prev_, k, n_), [&](Range seg, std::size_t off, std::uint32_t s) {
      w_.add(plan_copy(Buffer::output, seg, Buffer::scratch, slot(base_self, k, off, seg.count)));
      w_.after(step(rs_put, k, s));
      if (k > 0) w_.after(step(rs_reduce, k - 1, s));
      w_.after_flag(flags_in_++, prev_);
    });
  }

  PlanWriter w_;
  int n_, r_, prev_, next_;
  std::size_t count_, segment_elems_, slot_elems_;
  std::uint32_t flags_in_ = 0, flags_out_ = 0;
  std::array<std::vector<std::uint32_t>, kinds> first_;
};

}  // namespace

RankPlan ring_allreduce_rank_plan(std::string algorithm, int ranks, std::size_t count, std::size_t segment_elems,
                                  int rank) {
  return RingRankPlan(std::move(algorithm), ranks, count, segment_elems, rank).write();
}

}  // namespace detail

// Every rank fills 2(P-1) slots of the longest chunk; each segment of a chunk
// it receives is one flag.
PlanBounds allreduce_ring_bounds(int ranks, std::size_t count, std::size_t segment_elems) {
  if (ranks == 1) return {};
  const std::size_t slot_elems = max_chunk(count, ranks);
  const std::size_t segments_per_slot =
      segment_elems == 0 || slot_elems == 0 ? 1 : (slot_elems + segment_elems - 1) / segment_elems;
  const auto rounds = 2 * static_cast<std::size_t>(ranks - 1);
  return {rounds * slot_elems, static_cast<std::uint32_t>(rounds * segments_per_slot)};
}

RankPlan allreduce_ring_plan(int ranks, std::size_t count, int rank) {
  return detail::ring_allreduce_rank_plan("allreduce_ring", ranks, count, 0, rank);
}

Schedule allreduce_ring(int ranks, std::size_t count) {
  Builder b("allreduce_ring", ranks, count);
  detail::ring_allreduce_phases(b, 0);
  return std::move(b).finish();
}

}  // namespace earlybird::coll
