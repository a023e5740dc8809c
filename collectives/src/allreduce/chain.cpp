// allreduce_chain — a pipelined chain: segments flow 0 -> 1 -> ... -> P-1,
// each rank combining its input on the way, then the result flows back
// P-1 -> ... -> 0. Each segment moves as soon as it is ready, so while rank
// r+1 reduces segment j, rank r already sends segment j+1.
//
// Cost (Hockney, q = ceil(count / s) segments of ms bytes, s elements):
//   reduce pass (P + q - 2)(alpha + beta ms + gamma ms), return pass
//   (P + q - 2)(alpha + beta ms); the passes overlap (the return of early
//   segments runs, the other way along the links, while later ones are still
//   being reduced), so this sum is an upper bound.
//   rank 0: q puts, count elements sent, nothing reduced;
//   rank 0 < r < P-1: 2q puts, 2 count sent, count reduced;
//   rank P-1: q puts, count sent, count reduced; rounds 2(P-1).
// Pipelining hides the P factor for large vectors; latency grows linearly in
// P, so it loses to trees and butterflies for small ones.
//
// Limitations: none on the operator (every segment is combined in rank
// order, left to right: (in0 op in1) op in2 ...; rounding error O(u P)).
// Scratch: 2 count per rank, never reused: [0, count) receives the partial
// results of the reduce pass, [count, 2 count) the result on its way back.
// Vectors larger than the window run in batches (runtime). Calling
// allreduce_chain with segment_elems = 0 means one segment (the catalogue's
// 0 means its 64 KiB default).
//
// State for P = 4, one segment (sets of ranks each holds in its output):
//   step          rank 0     rank 1     rank 2     rank 3
//   start         {0}        {1}        {2}        {3}
//   reduce 0->1              {0,1}
//   reduce 1->2                         {0-2}
//   reduce 2->3                                    {0-3}
//   return 3->2                         {0-3}
//   return 2->1              {0-3}
//   return 1->0   {0-3}
// With several segments, segment j+1 runs one step behind segment j.
#include "chain_phases.hpp"

#include <earlybird/collectives/allreduce.hpp>
#include <earlybird/collectives/partition.hpp>

namespace earlybird::coll {
namespace detail {
namespace {

Slot reduce_landing(int rank, Range segment) { return {rank, Buffer::scratch, segment}; }
Slot return_landing(int rank, std::size_t count, Range segment) {
  return {rank, Buffer::scratch, {count + segment.begin, segment.count}};
}

// Rank r puts its partial result (rank 0: its input) to r+1, which combines
// it, on the left, with its own input into its output.
void reduce_pass(Builder& b, Range segment) {
  for (int r = 0; r + 1 < b.ranks(); ++r) {
    const Buffer partial = r == 0 ? Buffer::input : Buffer::output;
    b.put({r, partial, segment}, reduce_landing(r + 1, segment));
    b.reduce({r + 1, Buffer::output, segment}, reduce_landing(r + 1, segment), {r + 1, Buffer::input, segment});
  }
}

// Rank P-1 puts the result to P-2, which copies it out and forwards it from
// scratch (so the copy and the forward run side by side), and so on to 0.
void return_pass(Builder& b, Range segment) {
  const std::size_t n = b.count();
  for (int r = b.ranks() - 1; r > 0; --r) {
    const Slot result = r == b.ranks() - 1 ? Slot{r, Buffer::output, segment} : return_landing(r, n, segment);
    b.put(result, return_landing(r - 1, n, segment));
    b.copy({r - 1, Buffer::output, segment}, return_landing(r - 1, n, segment));
  }
}

}  // namespace

void chain_allreduce_phases(Builder& b, std::size_t segment_elems) {
  const std::vector<Range> pieces = segments({0, b.count()}, segment_elems);
  for (const Range segment : pieces) reduce_pass(b, segment);
  for (const Range segment : pieces) return_pass(b, segment);
  b.copy_unwritten_output();  // P = 1: output = input
}

}  // namespace detail

Schedule allreduce_chain(int ranks, std::size_t count, std::size_t segment_elems) {
  Builder b("allreduce_chain", ranks, count);
  detail::chain_allreduce_phases(b, segment_elems);
  return std::move(b).finish();
}

}  // namespace earlybird::coll
