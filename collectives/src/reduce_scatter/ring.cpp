// reduce_scatter_ring — block b's partial sum travels once around the ring
// from rank b+1 to rank b, every rank on the way adding its own block b: in
// round k rank r puts its partial of block r-1-k to rank r+1, which combines
// it with its input block r-1-k into scratch (the last round: into its output).
//
// Cost (Hockney, m bytes = one rank's input, P blocks of m/P):
//   (P-1) alpha + ((P-1)/P)(beta + gamma) m
//   per rank: P-1 puts, (P-1) count elements sent and reduced; rounds P-1.
// Bandwidth-optimal; latency grows linearly in P.
//
// Limitations:
//   - needs a commutative op: block b is combined in ring order b+1, ..., P-1,
//     0, ..., b, which is not rank order for b < P-1, and each rank puts its
//     own element on the left of the partial it received.
//   - scratch of P-1 blocks per rank (slot k for round k, reduced in place,
//     never reused: no acknowledgement flags).
//   - in place (input aliases output): the output is written once, by the
//     last round, after the rank's every read of its input.
//   - a rank's plan has 2(P-1) steps: planned per rank (AlgorithmParams::keep,
//     visiting only the ring positions next to kept ranks), P = 16384 in
//     ~0.16 s (docs/benchmarks.md).
//
// State for P = 4 (partial each rank holds after the round; "b2:3,0" = block
// 2 reduced over ranks 3 and 0):
//   round   rank 0     rank 1     rank 2     rank 3
//   k=0     b2:3,0     b3:0,1     b0:1,2     b1:2,3
//   k=1     b1:2,3,0   b2:3,0,1   b3:0,1,2   b0:1,2,3
//   k=2     b0:all     b1:all     b2:all     b3:all   (into the output)
#include "ring_phase.hpp"

#include "../schedule/block_slots.hpp"

#include <earlybird/collectives/builder.hpp>
#include <earlybird/collectives/reduce_scatter.hpp>

namespace earlybird::coll {
namespace {

using detail::block_slot;

// Rank r adds its input's block j; round k's partial lands in scratch slot
// k; the last round's sum is the output.
class InputBlocks final : public detail::RingReduceLayout {
 public:
  explicit InputBlocks(std::size_t count) : count_(count) {}
  Slot contribution(int rank, int j) const override {
    return block_slot(rank, Buffer::input, count_, static_cast<std::size_t>(j));
  }
  Slot landing(int rank, int k) const override {
    return block_slot(rank, Buffer::scratch, count_, static_cast<std::size_t>(k));
  }
  Slot result(int rank) const override { return block_slot(rank, Buffer::output, count_); }

 private:
  std::size_t count_;
};

}  // namespace

Schedule reduce_scatter_ring(int ranks, std::size_t count, const std::vector<int>& keep) {
  Builder b("reduce_scatter_ring", ranks, count, shape_of(Collective::reduce_scatter, ranks, count));
  b.keep_only(keep);
  detail::ring_reduce_scatter_phase(b, InputBlocks(count));
  if (ranks == 1) b.copy({0, Buffer::output, {0, count}}, {0, Buffer::input, {0, count}});
  return std::move(b).finish();
}

PlanBounds reduce_scatter_blockwise_bounds(int ranks, std::size_t count) {
  const auto others = static_cast<std::size_t>(ranks - 1);
  return {count == 0 ? 0 : others * count, static_cast<std::uint32_t>(count == 0 ? 0 : others)};
}

}  // namespace earlybird::coll
