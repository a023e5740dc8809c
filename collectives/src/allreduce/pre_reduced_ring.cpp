// allreduce_pre_reduced_ring (PRR, Proficz 2018) — a ring in arrival order
// (virtual rank id = the id-th rank to arrive; next = id+1 mod P) in which
// early ranks run k[id] "pre-steps" ahead of the plain ring. pap.hpp defines
// k, the first senders sp[j] and the last reducers rp[j] = sp[j] - 1.
//
// Schedule (P balanced chunks, as the ring's): chunk j is an independent
// chain. Reduce: sp[j] puts its input chunk to sp[j]+1, which combines
// (partial) op (own input) into its output and puts that on, ... up to
// rp[j] (P-1 hops, every rank but sp[j] reduces chunk j exactly once).
// Allgather: rp[j] puts its output chunk to rp[j]+1 = sp[j], which copies it
// out and forwards it from scratch, ... up to rp[j]-1 (P-1 hops). The
// Builder derives every dependency, so a hop runs as soon as its data is
// there; steps are emitted hop by hop, chunks in descending order within a
// hop (the paper's loop order), which only sets each rank's priority.
// k = 0 (the default) is the plain ring in arrival order.
//
// Cost per rank (count >= P; all chunks non-empty). Let
//   s(i) = 1 + k[i] - k[i-1 mod P]   chunks rank i starts (s(0) = k[0] + 1, as k[P-1] = 0)
// Rank r sends chunk j in the reduce unless r = rp[j], forwards it in the
// allgather unless r+1 = rp[j], receives it in the reduce unless r = sp[j]
// and in the allgather unless r = rp[j]. Indices mod P:
//   puts(r)     = 2P - s(r+1) - s(r+2) = 2(P-1) + k[r] - k[r+2]
//                 (reduce P-1 + k[r] - k[r+1], allgather P-1 + k[r+1] - k[r+2])
//   reduced(r)  = P - s(r)             = P-1 - k[r] + k[r-1]   chunks
//   received(r) = 2P - s(r) - s(r+1)   = 2(P-1) + k[r-1] - k[r+1]   (= its flags)
// Elements: the same sums over chunk sizes (P | count: count/P per chunk).
// Total puts 2P(P-1), the ring's; rounds 2(P-1) whatever k. Hockney, every
// rank on time: the ring's 2(P-1)(alpha + beta m/P) + ((P-1)/P) gamma m,
// with the busiest rank's single port doing max_r puts(r) transfers.
// Early ranks do more: with k = presteps_last_late(P), P >= 4, ids
// 0..P-4 put 2P times, id P-3 2P-1, id P-2 P, and the late id P-1 P+1
// (it reduces P-1 chunks and receives P). The catalogue's `arrival_prr`
// runs k = presteps_all_ahead(P) = [P-1, ..., 0] instead: every chunk starts
// at id 0, the late id P-1 puts P times and nothing else waits on it.
//
// What the last rank does after it arrives: it is the last reducer of every
// chunk rank 0 starts (chunks 0..k[0]): those partials are waiting in its
// scratch; it reduces its input into each and starts their allgather. With
// the recurrence's k it also starts chunk P-1 (k[P-2] is always 0), whose
// reduce chain P-1 -> 0 -> ... -> P-2 and allgather P-2 -> P-1 -> ... -> P-3
// (2(P-1) hops) begin only when it arrives: as long as the ring's critical
// path. k = [P-1, ..., 1, 0] (all chunks from rank 0) avoids that: the late
// rank only reduces and sends, and P-2 allgather hops follow its last put.
//
// Limitations:
//   - needs a commutative operator: chunks are combined starting at
//     different ranks, and arrival order is not rank order anyway.
//   - not pipelined within a chunk (one transfer per chunk and hop), so after
//     the late rank's last put the last chunk still travels P-2 hops of m/P.
//   - scratch: scratch mirrors the vector twice, never reused (no
//     acknowledgement flags): chunk j arrives for the reduce at
//     [begin_j, end_j) and for the allgather at count + [begin_j, end_j).
//     Every rank uses at most 2 count; for P >= 2 and count >= 1 the
//     schedule's maximum is exactly 2 count for every k (some rank receives
//     the last non-empty chunk in the allgather), so batches sized with any
//     k fit every k. That is up to P/(P-1) times the ring's
//     2(P-1) ceil(count/P): a rank that starts no chunk and is no last
//     reducer receives all P chunks twice, which fixed ring slots cannot hold
//     without reuse.
//   - params.presteps must be valid (pap.hpp) or empty; anything else throws
//     std::invalid_argument naming the problem.
//
// State for P = 4, k = presteps_last_late(4) = [2, 1, 0, 0]: f = id + k =
// 2 2 2 3, sp = 0 0 0 3, rp = 3 3 3 2; id 3 late ("c0-2:0,1" = chunks 0..2
// reduced over ids 0 and 1; "+c3" = chunk 3's result copied out):
//   stage                 id 0         id 1         id 2          id 3
//   before id 3 arrives   sends c0-2   c0-2:0,1     c0-2:0-2      (partials in scratch)
//   id 3 arrives          -            -            -             c0-2:all, sends c3 and c0-2
//   c3 reduce, c0-2 back  c3:3,0 +c0-2 c3:3-1 +c0-2 c3:all +c0-2  -
//   c3 allgather          +c3          +c3          -             +c3
#include <earlybird/collectives/allreduce.hpp>
#include <earlybird/collectives/builder.hpp>
#include <earlybird/collectives/pap.hpp>
#include <earlybird/collectives/partition.hpp>

#include <stdexcept>
#include <vector>

namespace earlybird::coll {
namespace {

Slot reduce_landing(int rank, Range chunk_range) { return {rank, Buffer::scratch, chunk_range}; }
Slot gather_landing(int rank, std::size_t count, Range chunk_range) {
  return {rank, Buffer::scratch, {count + chunk_range.begin, chunk_range.count}};
}

// Hop `hop` of a chunk's reduction: `from` puts its partial (the first
// sender: its input) to the next rank, which combines partial op own input.
void reduce_hop(Builder& b, Range c, int from, int hop) {
  const int to = (from + 1) % b.ranks();
  const Buffer partial = hop == 0 ? Buffer::input : Buffer::output;
  b.put({from, partial, c}, reduce_landing(to, c));
  b.reduce({to, Buffer::output, c}, reduce_landing(to, c), {to, Buffer::input, c});
}

// Hop `hop` of a chunk's allgather: `from` puts the result (the last reducer:
// from its output, the others: from where it landed) to the next rank, which
// copies it out.
void gather_hop(Builder& b, Range c, int from, int hop) {
  const int to = (from + 1) % b.ranks();
  const Slot held = hop == 0 ? Slot{from, Buffer::output, c} : gather_landing(from, b.count(), c);
  b.put(held, gather_landing(to, b.count(), c));
  b.copy({to, Buffer::output, c}, gather_landing(to, b.count(), c));
}

std::vector<std::uint32_t> resolved_presteps(int ranks, std::span<const std::uint32_t> presteps) {
  if (presteps.empty()) return std::vector<std::uint32_t>(static_cast<std::size_t>(ranks), 0);
  const std::string problem = presteps_problem(presteps, ranks);
  if (!problem.empty()) throw std::invalid_argument("allreduce_pre_reduced_ring: " + problem);
  return {presteps.begin(), presteps.end()};
}

}  // namespace

Schedule allreduce_pre_reduced_ring(int ranks, std::size_t count, std::span<const std::uint32_t> presteps) {
  if (ranks < 1) throw std::invalid_argument("allreduce_pre_reduced_ring: ranks must be >= 1");
  const std::vector<int> first = prr_first_senders(resolved_presteps(ranks, presteps));
  Builder b("allreduce_pre_reduced_ring", ranks, count);
  for (int hop = 0; hop + 1 < ranks; ++hop)
    for (int j = ranks - 1; j >= 0; --j)
      reduce_hop(b, chunk(count, ranks, j), (first[static_cast<std::size_t>(j)] + hop) % ranks, hop);
  for (int hop = 0; hop + 1 < ranks; ++hop)
    for (int j = ranks - 1; j >= 0; --j)  // the allgather starts at rp[j] = sp[j] - 1
      gather_hop(b, chunk(count, ranks, j), (first[static_cast<std::size_t>(j)] + ranks - 1 + hop) % ranks, hop);
  b.copy_unwritten_output();  // P = 1: output = input
  return std::move(b).finish();
}

}  // namespace earlybird::coll
