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
// Any P: with P' = 2^floor(log2 P) and e = P - P' extra ranks, rank P'+i
// (i < e) first hands its vector to rank i (the fold), sits out the
// butterfly, and gets the result back from rank i at the end (the unfold).
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
#include "vector_slot.hpp"

#include <earlybird/collectives/allreduce.hpp>
#include <earlybird/collectives/builder.hpp>
#include <earlybird/collectives/partition.hpp>

#include <bit>
#include <vector>

namespace earlybird::coll {

using detail::whole_vector;

Schedule allreduce_recursive_doubling(int ranks, std::size_t count) {
  Builder b("allreduce_recursive_doubling", ranks, count);
  const int core = floor_pow2(ranks);
  const int extra = ranks - core;
  const std::size_t rounds = static_cast<std::size_t>(std::countr_zero(static_cast<unsigned>(core)));

  // A rank's running vector is its input until its first reduce writes the
  // output: reading input directly saves copying input to output first.
  std::vector<Buffer> vector_in(static_cast<std::size_t>(ranks), Buffer::input);
  auto vector_of = [&](int r) { return whole_vector(r, vector_in[static_cast<std::size_t>(r)], count); };
  auto reduce_into = [&](int r, std::size_t slot) {
    b.reduce(whole_vector(r, Buffer::output, count), vector_of(r), whole_vector(r, Buffer::scratch, count, slot));
    vector_in[static_cast<std::size_t>(r)] = Buffer::output;
  };

  // Scratch slots: butterfly round k uses slot k; the fold lands in slot
  // `rounds` of rank i; the unfold in slot 0 of the extra rank (which uses
  // no other slot).
  for (int i = 0; i < extra; ++i) {  // fold
    b.put(vector_of(core + i), whole_vector(i, Buffer::scratch, count, rounds));
    reduce_into(i, rounds);
  }
  for (std::size_t k = 0; k < rounds; ++k) {
    // All sends of a round read the vectors before any reduce of the round.
    for (int r = 0; r < core; ++r) b.put(vector_of(r), whole_vector(r ^ (1 << k), Buffer::scratch, count, k));
    for (int r = 0; r < core; ++r) reduce_into(r, k);
  }
  for (int i = 0; i < extra; ++i) {  // unfold
    b.put(vector_of(i), whole_vector(core + i, Buffer::scratch, count, 0));
    b.copy(whole_vector(core + i, Buffer::output, count), whole_vector(core + i, Buffer::scratch, count, 0));
  }
  b.copy_unwritten_output();  // P = 1: output = input
  return std::move(b).finish();
}

}  // namespace earlybird::coll
