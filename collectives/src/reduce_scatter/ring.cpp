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
//
// State for P = 4 (partial each rank holds after the round; "b2:3,0" = block
// 2 reduced over ranks 3 and 0):
//   round   rank 0     rank 1     rank 2     rank 3
//   k=0     b2:3,0     b3:0,1     b0:1,2     b1:2,3
//   k=1     b1:2,3,0   b2:3,0,1   b3:0,1,2   b0:1,2,3
//   k=2     b0:all     b1:all     b2:all     b3:all   (into the output)
#include "../schedule/block_slots.hpp"

#include <earlybird/collectives/builder.hpp>
#include <earlybird/collectives/reduce_scatter.hpp>

namespace earlybird::coll {
namespace {

using detail::block_slot;

int block_sent(int rank, int k, int p) { return ((rank - 1 - k) % p + p) % p; }

// All puts of a round before its reduces: in the last round a reduce writes
// the output, which an in-place call shares with the input the puts of
// round 0 (P = 2) still read.
void ring_round(Builder& b, int k) {
  const int p = b.ranks();
  const std::size_t n = b.count();
  for (int r = 0; r < p; ++r) {
    const int index = block_sent(r, k, p);
    const Slot partial = k == 0 ? block_slot(r, Buffer::input, n, index) : block_slot(r, Buffer::scratch, n, k - 1);
    b.put(partial, block_slot((r + 1) % p, Buffer::scratch, n, k));
  }
  for (int next = 0; next < p; ++next) {
    const int index = block_sent(next - 1, k, p);
    const Slot landing = block_slot(next, Buffer::scratch, n, k);
    const Slot sum = k == p - 2 ? block_slot(next, Buffer::output, n, 0) : landing;
    b.reduce(sum, block_slot(next, Buffer::input, n, index), landing);
  }
}

}  // namespace

Schedule reduce_scatter_ring(int ranks, std::size_t count) {
  Builder b("reduce_scatter_ring", ranks, count, shape_of(Collective::reduce_scatter, ranks, count));
  for (int k = 0; k + 1 < ranks; ++k) ring_round(b, k);
  if (ranks == 1) b.copy({0, Buffer::output, {0, count}}, {0, Buffer::input, {0, count}});
  return std::move(b).finish();
}

}  // namespace earlybird::coll
