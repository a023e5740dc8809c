// allreduce_linear — the star: every rank puts its vector into rank 0's
// scratch, rank 0 reduces them in rank order, then puts the result into every
// other rank's scratch.
//
// Cost (Hockney, m bytes per rank): (P-1)(2(alpha + beta m) + gamma m): rank
// 0's single port serialises the P-1 transfers in and the P-1 out.
//   rank 0: P-1 puts, (P-1) count elements sent, (P-1) count reduced;
//   rank r > 0: 1 put, count elements sent, nothing reduced; rounds 2.
// The baseline: fewest rounds after recursive doubling's, but rank 0 is the
// bottleneck in bandwidth and reduction work.
//
// Limitations: none on the operator (rank 0 combines in rank order:
// ((in0 op in1) op in2) ...; rounding error grows as O(u P)). Scratch: rank 0
// (P-1) vectors, one per sender, never reused; other ranks one vector, for
// the result. Vectors larger than the window run in batches (runtime).
//
// State for P = 4 (sets of ranks held; rank 0's output after each reduce):
//   step          rank 0     rank 1     rank 2     rank 3
//   start         {0}        {1}        {2}        {3}
//   gather        +{1},{2},{3} in scratch
//   reduce 1      {0,1}
//   reduce 2      {0-2}
//   reduce 3      {0-3}
//   scatter       {0-3}      {0-3}      {0-3}      {0-3}
#include "../schedule/block_slots.hpp"

#include <earlybird/collectives/allreduce.hpp>
#include <earlybird/collectives/builder.hpp>

namespace earlybird::coll {
namespace {

using detail::block_slot;

// Rank r > 0 puts its input into rank 0's scratch vector r-1; rank 0 folds
// them into its output in rank order, starting from its own input.
void gather_and_reduce(Builder& b) {
  const std::size_t n = b.count();
  auto landing = [&](int sender) { return block_slot(0, Buffer::scratch, n, static_cast<std::size_t>(sender - 1)); };
  for (int r = 1; r < b.ranks(); ++r) b.put(block_slot(r, Buffer::input, n), landing(r));
  Buffer so_far = Buffer::input;
  for (int r = 1; r < b.ranks(); ++r) {
    b.reduce(block_slot(0, Buffer::output, n), block_slot(0, so_far, n), landing(r));
    so_far = Buffer::output;
  }
}

// Rank 0 puts the result into every other rank's scratch, which copies it out.
void scatter_result(Builder& b) {
  const std::size_t n = b.count();
  for (int r = 1; r < b.ranks(); ++r) {
    const Slot landing = block_slot(r, Buffer::scratch, n);
    b.put(block_slot(0, Buffer::output, n), landing);
    b.copy(block_slot(r, Buffer::output, n), landing);
  }
}

}  // namespace

Schedule allreduce_linear(int ranks, std::size_t count) {
  Builder b("allreduce_linear", ranks, count);
  gather_and_reduce(b);
  scatter_result(b);
  b.copy_unwritten_output();  // P = 1: output = input
  return std::move(b).finish();
}

}  // namespace earlybird::coll
