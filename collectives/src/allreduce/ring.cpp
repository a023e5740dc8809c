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

#include <earlybird/collectives/allreduce.hpp>
#include <earlybird/collectives/partition.hpp>

namespace earlybird::coll {
namespace detail {
namespace {

int ring_mod(int value, int p) { return ((value % p) + p) % p; }

// Who sends what in one ring round: every ring position i sends chunk
// chunk_of(i) to position i+1, into scratch slot `slot`.
struct RingRound {
  int slot;
  bool first;   // reduce-scatter round 0: the sender's chunk is still its input
  bool reduce;  // false: the allgather (the receiver copies)
};

// The ring positions whose round touches a kept rank's memory (position i
// sends to position i + 1): all of them unless the builder is focused, so a
// per-rank plan costs O(rounds) and not O(rounds x ring size).
std::vector<int> positions_to_build(const Builder& b, const std::vector<int>& ring) {
  const int n = static_cast<int>(ring.size());
  std::vector<int> positions;
  for (int i = 0; i < n; ++i)
    if (b.keeps(ring[static_cast<std::size_t>(i)]) || b.keeps(ring[static_cast<std::size_t>((i + 1) % n)]))
      positions.push_back(i);
  return positions;
}

template <class ChunkOf>
void ring_round(Builder& b, const std::vector<int>& ring, const std::vector<int>& positions,
                std::size_t segment_elems, RingRound round, ChunkOf chunk_of) {
  const int n = static_cast<int>(ring.size());
  const std::size_t slot_elems = max_chunk(b.count(), n);
  const Buffer sent_from = round.first ? Buffer::input : Buffer::output;
  for (int i : positions) {
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
  const std::vector<int> positions = positions_to_build(b, ring);
  for (int k = 0; k < n - 1; ++k)
    ring_round(b, ring, positions, segment_elems, {k, k == 0, true}, [&](int i) { return ring_mod(i - k, n); });
}

void ring_allgather_phase(Builder& b, const std::vector<int>& ring, std::size_t segment_elems) {
  const int n = static_cast<int>(ring.size());
  const std::vector<int> positions = positions_to_build(b, ring);
  for (int k = 0; k < n - 1; ++k)
    ring_round(b, ring, positions, segment_elems, {k, false, false},
               [&](int i) { return ring_mod(i + 1 - k, n); });
}

void ring_allreduce_phases(Builder& b, std::size_t segment_elems) {
  std::vector<int> ring(static_cast<std::size_t>(b.ranks()));
  for (int r = 0; r < b.ranks(); ++r) ring[static_cast<std::size_t>(r)] = r;
  ring_reduce_scatter_phase(b, ring, segment_elems);
  b.begin_scratch_region();
  ring_allgather_phase(b, ring, segment_elems);
  b.copy_unwritten_output();  // P = 1: output = input
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

Schedule allreduce_ring(int ranks, std::size_t count, const std::vector<int>& keep) {
  Builder b("allreduce_ring", ranks, count);
  b.keep_only(keep);
  detail::ring_allreduce_phases(b, 0);
  return std::move(b).finish();
}

}  // namespace earlybird::coll
