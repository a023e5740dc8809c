// allgather_bruck — Bruck's concatenation: rank r keeps its blocks rotated so
// that position i of its scratch holds block r+i (mod P). In the round of
// distance d = 1, 2, 4, ... rank r puts its first min(d, P-d) positions to
// rank r-d, which appends them at its positions d, d+1, ...; after
// ceil(log2 P) rounds every rank has all P positions, and the rotation is
// undone as the blocks arrive (each arrival is copied to its output block,
// in at most two pieces where the block numbers wrap).
//
// Cost (Hockney, m bytes = the gathered output):
//   ceil(log2 P) alpha + ((P-1)/P) beta m        (any P, no fold)
//   per rank: ceil(log2 P) puts, (P-1) count elements; rounds (dependency
//   depth) log2 P for powers of two, else max(log2 P', 1 + ceil(log2(P-P')))
//   with P' = 2^floor(log2 P): the last round sends only the first P-P'
//   positions, which arrived early, so it need not wait for the round before.
// Fewest rounds for any P; for large blocks the ring's neighbour-only
// traffic is easier on the network.
//
// Limitations: scratch of P blocks per rank (rotated, never reused: no
// acknowledgement flags). A rank first copies its input into scratch
// position 0 and into its output block and reads input nowhere else, so
// in-place calls are safe. Planned per rank (AlgorithmParams::keep: the
// rounds' sends that touch no kept rank are skipped), P = 16384 in ~6 ms.
//
// State for P = 4 (blocks each rank holds, in its rotated order):
//   round   rank 0     rank 1     rank 2     rank 3
//   start   0          1          2          3
//   d=1     0 1        1 2        2 3        3 0
//   d=2     0 1 2 3    1 2 3 0    2 3 0 1    3 0 1 2
// For P = 5 the round d=4 moves a single block: min(4, 5-4).
#include "../schedule/block_slots.hpp"
#include "../schedule/build_schedule.hpp"

#include <earlybird/collectives/allgather.hpp>
#include <earlybird/collectives/builder.hpp>

#include <algorithm>

namespace earlybird::coll {
namespace {

class Bruck : detail::BlockGenerator {
 public:
  explicit Bruck(Builder& b) : BlockGenerator(b), ranks_(b.ranks()) {}

  void run() {
    for (int r = 0; r < ranks_; ++r) start(r);
    for (int dist = 1; dist < ranks_; dist *= 2)
      for (int r = 0; r < ranks_; ++r)
        if (b_.keeps(r) || b_.keeps((r - dist + ranks_) % ranks_)) send_front(r, dist);  // else a focused build drops it
  }

 private:
  void start(int r) {
    b_.copy(positions(r, 0, 1), input_of(r));
    b_.copy(output_blocks(r, r, 1), input_of(r));
  }

  // Rank r's first min(dist, P-dist) positions go to rank r-dist's
  // positions dist.., which are blocks r, r+1, ... (mod P) there.
  void send_front(int r, int dist) {
    const int n = std::min(dist, ranks_ - dist);
    const int to = (r - dist + ranks_) % ranks_;
    b_.put(positions(r, 0, n), positions(to, dist, n));
    const int before_wrap = std::min(n, ranks_ - r);
    b_.copy(output_blocks(to, r, before_wrap), positions(to, dist, before_wrap));
    b_.copy(output_blocks(to, 0, n - before_wrap), positions(to, dist + before_wrap, n - before_wrap));
  }

  Slot positions(int rank, int first, int n) const { return blocks(rank, Buffer::scratch, first, n); }
  Slot output_blocks(int rank, int first, int n) const { return blocks(rank, Buffer::output, first, n); }

  int ranks_;
};

}  // namespace

Schedule allgather_bruck(int ranks, std::size_t count, const std::vector<int>& keep) {
  return detail::build_schedule("allgather_bruck", Collective::allgather, ranks, count,
                                [](Builder& b) { Bruck(b).run(); }, keep);
}

// Scratch: P blocks. Flags: one put received per round, ceil(log2 P) rounds.
PlanBounds allgather_bruck_bounds(int ranks, std::size_t count) {
  if (count == 0) return {};
  std::uint32_t rounds = 0;
  for (int dist = 1; dist < ranks; dist *= 2) ++rounds;
  return {static_cast<std::size_t>(ranks) * count, rounds};
}

}  // namespace earlybird::coll
