// allreduce_recursive_doubling — butterfly: in round k every rank exchanges its
// whole vector with rank XOR 2^k and both reduce.
//
// Cost (Hockney): ceil(log2 P)(alpha + beta m + gamma m) for P a power of two;
// otherwise two more transfers of m for the fold (below).
//   per rank in the butterfly: log2 P' puts of `count` elements; rounds
//   log2 P' (+2 when P is not a power of two).
// Best for small vectors (fewest rounds); moves log2 P times the vector, so it
// loses to the ring for large ones.
//
// Any P: the upper fold (../topology/fold.hpp): with P' = 2^floor(log2 P) and
// e = P - P' extra ranks, rank P'+i (i < e) first hands its vector to rank i
// (fold in), sits out the butterfly, and gets the result back from rank i at
// the end (fold out).
//
// Limitations: commutative ops only (partners combine in either order);
// scratch of log2 P' vectors per rank (one slot per round, never reused), one
// more on ranks that take a fold;
// vectors larger than the window run in batches (runtime).
//
// State for P = 4 (sets of ranks each holds):
//   round        rank 0     rank 1     rank 2     rank 3
//   start        {0}        {1}        {2}        {3}
//   k=0 (xor 1)  {0,1}      {0,1}      {2,3}      {2,3}
//   k=1 (xor 2)  {0-3}      {0-3}      {0-3}      {0-3}
// For P = 5 rank 4 folds into rank 0 first and receives the result last.
#include "../schedule/block_slots.hpp"
#include "../topology/fold.hpp"

#include <earlybird/collectives/allreduce.hpp>
#include <earlybird/collectives/builder.hpp>

#include <vector>

namespace earlybird::coll {

using detail::block_slot;

// One slot per round, one more on a rank that takes a fold; a flag per
// round, and one each for the fold in and out.
PlanBounds allreduce_recursive_doubling_bounds(int ranks, std::size_t count) {
  if (ranks == 1) return {};
  const detail::Fold fold(ranks, detail::FoldPairing::upper);
  const auto slots = static_cast<std::size_t>(fold.rounds() + (fold.extra() > 0 ? 1 : 0));
  return {slots * count, static_cast<std::uint32_t>(fold.rounds() + 2)};
}

Schedule allreduce_recursive_doubling(int ranks, std::size_t count, const std::vector<int>& keep) {
  Builder b("allreduce_recursive_doubling", ranks, count);
  b.keep_only(keep);
  const detail::Fold fold(ranks, detail::FoldPairing::upper);
  const int core = fold.core();
  const auto rounds = static_cast<std::size_t>(fold.rounds());

  // A rank's running vector is its input until its first reduce writes the
  // output (the fold's, for a rank that takes one): reading input directly
  // saves copying input to output first.
  std::vector<Buffer> vector_in;
  for (int r = 0; r < core; ++r) vector_in.push_back(fold.vector_buffer(r));
  auto vector_of = [&](int r) { return block_slot(r, vector_in[static_cast<std::size_t>(r)], count); };

  // Scratch slots: butterfly round k uses slot k; the fold lands in slot
  // `rounds` of rank i; the fold out in slot 0 of the extra rank (which uses
  // no other slot).
  fold.fold_in(b, rounds * count);
  for (std::size_t k = 0; k < rounds; ++k) {
    // All sends of a round read the vectors before any reduce of the round.
    // A focused build skips what touches no kept rank, bookkeeping kept.
    for (int r = 0; r < core; ++r) {
      const int peer = r ^ (1 << k);
      if (b.keeps(r) || b.keeps(peer)) b.put(vector_of(r), block_slot(peer, Buffer::scratch, count, k));
    }
    for (int r = 0; r < core; ++r) {
      if (b.keeps(r))
        b.reduce(block_slot(r, Buffer::output, count), vector_of(r), block_slot(r, Buffer::scratch, count, k));
      vector_in[static_cast<std::size_t>(r)] = Buffer::output;
    }
  }
  fold.fold_out(b);
  b.copy_unwritten_output();  // P = 1: output = input
  return std::move(b).finish();
}

}  // namespace earlybird::coll
