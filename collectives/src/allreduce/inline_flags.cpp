// allreduce_inline_flags — for small vectors on one node: every rank
// publishes its vector in its own scratch and tells every other rank; every
// rank reads all P vectors and folds them in rank order.
//
// Cost (Hockney, m bytes per rank): alpha + (P-1)(beta m + gamma m) per rank
// in one round: no rank waits on another's partial result, only on its
// input. Every rank reads (P-1) m and reduces (P-1) m, so it is for small m
// (the runtime uses it up to a few hundred bytes).
//   every rank: 1 copy, P-1 gets of count elements, P-1 reductions; rounds 1.
//
// Two executions, one result (docs/design.md, "The node path for small
// messages"): where the runtime can load and store every rank's window (a
// shared-memory window on one node), it runs this schedule's meaning on
// cache lines that carry the data and the sequence number together
// (runtime/src/exec/inline_allreduce.hpp: one write of the vector, one line
// read per peer, no flag apart from the data, which the IR cannot say);
// elsewhere the executor runs the schedule below, step by step.
//
// Limitations: none on the operator (every rank folds in0 op in1 op ... in
// rank order, so every rank computes the same bits). Scratch: (P+1) count
// per rank: the published copy and one landing slot per rank.
//
// State for P = 4 (sets of ranks held; any rank r's output):
//   step          rank 0     rank 1     rank 2     rank 3
//   publish       own copy in scratch slot 0, a flag to every other rank
//   read          slots 1..4 hold {0}, {1}, {2}, {3} (own: its slot 0)
//   fold          {0,1} -> {0-2} -> {0-3} on every rank
#include "../schedule/block_slots.hpp"

#include <earlybird/collectives/allreduce.hpp>
#include <earlybird/collectives/builder.hpp>

namespace earlybird::coll {
namespace {

using detail::block_slot;

// Rank r's copy of rank k's vector: its own published slot, or the landing
// slot k + 1 it reads rank k's published slot into.
Slot contribution(Builder& b, int r, int k) {
  const std::size_t n = b.count();
  if (k == r) return block_slot(r, Buffer::scratch, n, 0);
  const Slot landing = block_slot(r, Buffer::scratch, n, static_cast<std::size_t>(k) + 1);
  b.get(block_slot(k, Buffer::scratch, n, 0), landing);
  return landing;
}

}  // namespace

Schedule allreduce_inline_flags(int ranks, std::size_t count) {
  Builder b("allreduce_inline_flags", ranks, count);
  const std::size_t n = b.count();
  if (ranks > 1) {
    for (int r = 0; r < ranks; ++r) b.copy(block_slot(r, Buffer::scratch, n, 0), block_slot(r, Buffer::input, n));
    for (int r = 0; r < ranks; ++r) {
      Slot so_far = contribution(b, r, 0);
      for (int k = 1; k < ranks; ++k) {
        const Slot output = block_slot(r, Buffer::output, n);
        b.reduce(output, so_far, contribution(b, r, k));
        so_far = output;
      }
    }
  }
  b.copy_unwritten_output();  // P = 1: output = input
  return std::move(b).finish();
}

}  // namespace earlybird::coll
