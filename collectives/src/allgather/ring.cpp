// allgather_ring — every block travels once around the ring: in round k rank
// r passes block r-k to r+1, which keeps it in scratch slot k and copies it
// into its output.
//
// Cost (Hockney, m bytes = the gathered output, P blocks of m/P):
//   (P-1) alpha + ((P-1)/P) beta m
//   per rank: P-1 puts, (P-1) count elements; rounds P-1.
// Bandwidth-optimal; latency grows linearly in P, so small blocks want
// bruck or recursive_doubling.
//
// Limitations: scratch of P-1 blocks per rank (slot k for round k, never
// reused: no acknowledgement flags). A rank first copies its input into its
// output block and sends its block from there, so an in-place call (input =
// output block r) needs nothing special. A rank's plan has 2(P-1) steps:
// planned per rank (AlgorithmParams::keep, visiting only the ring positions
// next to kept ranks), P = 16384 in ~0.16 s (docs/benchmarks.md).
//
// State for P = 4 (blocks each rank holds):
//   round   rank 0     rank 1     rank 2     rank 3
//   start   0          1          2          3
//   k=0     0 3        1 0        2 1        3 2
//   k=1     0 3 2      1 0 3      2 1 0      3 2 1
//   k=2     all        all        all        all
#include "ring_phase.hpp"

#include <earlybird/collectives/allgather.hpp>
#include <earlybird/collectives/builder.hpp>

namespace earlybird::coll {
namespace {

// Block j at offset j*count of the output; rank r receives the block of
// round k, r-1-k, into scratch slot k.
class OwnBlockLayout final : public detail::RingAllgatherLayout {
 public:
  OwnBlockLayout(int ranks, std::size_t count) : ranks_(ranks), count_(count) {}
  Range block(int j) const override { return {static_cast<std::size_t>(j) * count_, count_}; }
  bool holds(int rank, int j) const override { return rank == j; }
  Slot origin(int rank, int j) const override { return {rank, Buffer::output, block(j)}; }
  Slot landing(int rank, int j) const override {
    const auto round = static_cast<std::size_t>((rank - 1 - j + 2 * ranks_) % ranks_);
    return {rank, Buffer::scratch, {round * count_, count_}};
  }

 private:
  int ranks_;
  std::size_t count_;
};

}  // namespace

Schedule allgather_ring(int ranks, std::size_t count, const std::vector<int>& keep) {
  Builder b("allgather_ring", ranks, count, shape_of(Collective::allgather, ranks, count));
  b.keep_only(keep);
  const OwnBlockLayout layout(ranks, count);
  for (int r = 0; r < ranks; ++r) b.copy(layout.origin(r, r), {r, Buffer::input, {0, count}});
  detail::ring_allgather_phase(b, layout);
  return std::move(b).finish();
}

PlanBounds allgather_blockwise_bounds(int ranks, std::size_t count) {
  const auto others = static_cast<std::size_t>(ranks - 1);
  return {count == 0 ? 0 : others * count, static_cast<std::uint32_t>(count == 0 ? 0 : others)};
}

}  // namespace earlybird::coll
