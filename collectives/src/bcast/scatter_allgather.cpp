// bcast_scatter_allgather — van de Geijn's broadcast: the root scatters the
// vector in P chunks down the binomial tree (../topology/tree.hpp; a rank receives its
// whole subtree's chunks in one put), then a ring allgather spreads the
// chunks. The ring skips every hop whose receiver already holds the chunk
// from the scatter (the root holds all; an ancestor of rank j holds chunk
// j), so every non-root rank receives each chunk exactly once.
//
// Cost (Hockney, m bytes):
//   (ceil(log2 P) + P - 1) alpha + 2((P-1)/P) beta m
//   per rank r, with c(i) the i-th of P balanced chunks and S(r) = ranks
//   [r, binomial_subtree_end(r)) r's subtree:
//     scatter: one put per child with a non-empty chunk range, carrying
//       |c(S(r))| - |c(r)| elements (the root: count - |c(0)|);
//     ring: for r < P-1, one put per non-empty chunk outside S(r+1), carrying
//       count - |c(S(r+1))| elements; rank P-1 sends nothing (the root holds all);
//   rounds (dependency depth) P-1 for count >= 1: chunk 0 walks from the root
//   to rank P-1 (the scatter overlaps the ring).
// For large vectors at moderate P: bandwidth close to the chain's without
// its pipeline fill, latency linear in P.
//
// Limitations: scratch of one vector per non-root rank (chunk i always at its
// own offset, whether the scatter or the ring brought it; never reused, so no
// acknowledgement flags); count < P leaves chunks empty and their steps out;
// non-root ranks never read their input. A rank's plan has O(P) steps:
// planned per rank (AlgorithmParams::keep; the scatter's and the ring's
// steps that touch no kept rank are skipped).
//
// State for P = 4 (tree 0 -> {2, 1}, 2 -> {3}; chunks each rank holds):
//   step       sends                     rank 0  rank 1    rank 2    rank 3
//   scatter 1  0->2 c2c3                 all     -         c2 c3     -
//   scatter 2  0->1 c1, 2->3 c3          all     c1        c2 c3     c3
//   ring k=0   0->1 c0, 1->2 c1, 2->3 c2 all     c1 c0     c1-c3     c2 c3
//   ring k=1   0->1 c3, 1->2 c0, 2->3 c1 all     c0 c1 c3  all       c1-c3
//   ring k=2   0->1 c2, 2->3 c0          all     all       all       all
//              (1->2 c3 skipped: rank 2 got c3 from the scatter)
#include "bcast_phases.hpp"

#include "../allgather/ring_phase.hpp"
#include "../topology/tree.hpp"

#include <earlybird/collectives/bcast.hpp>
#include <earlybird/collectives/partition.hpp>

namespace earlybird::coll {
namespace detail {
namespace {

// Elements of chunks [first, last) of P balanced chunks.
Range chunk_span(std::size_t count, int ranks, int first, int last) {
  const std::size_t begin = chunk(count, ranks, first).begin;
  return {begin, chunk(count, ranks, last - 1).end() - begin};
}

// Chunk j lives at its own offset: in the root's source, in everyone's scratch.
class ScatteredChunks final : public RingAllgatherLayout {
 public:
  ScatteredChunks(int ranks, std::size_t count, Buffer source) : ranks_(ranks), count_(count), source_(source) {}
  Range block(int j) const override { return chunk(count_, ranks_, j); }
  bool holds(int rank, int j) const override {
    return rank == 0 || (rank <= j && j < binomial_subtree_end(rank, ranks_));
  }
  Slot origin(int rank, int j) const override { return {rank, rank == 0 ? source_ : Buffer::scratch, block(j)}; }
  Slot landing(int rank, int j) const override { return {rank, Buffer::scratch, block(j)}; }

 private:
  int ranks_;
  std::size_t count_;
  Buffer source_;
};

// Every rank hands each child the chunks of the child's subtree; the child
// copies them into its output.
void binomial_scatter(Builder& b, Buffer source) {
  const int p = b.ranks();
  const Tree tree = binomial_tree(p);
  for (int r = 0; r < p; ++r) {
    for (const int child : children_in(tree, r, ChildOrder::highest_rank_first)) {
      if (!b.keeps(r) && !b.keeps(child)) continue;  // a focused build drops both steps
      const Range chunks = chunk_span(b.count(), p, child, binomial_subtree_end(child, p));
      const Slot landing{child, Buffer::scratch, chunks};
      b.put({r, r == 0 ? source : Buffer::scratch, chunks}, landing);
      b.copy({child, Buffer::output, chunks}, landing);
    }
  }
}

}  // namespace

void bcast_scatter_allgather_phase(Builder& b, Buffer source) {
  binomial_scatter(b, source);
  ring_allgather_phase(b, ScatteredChunks(b.ranks(), b.count(), source));
  copy_root_output(b, source);
}

}  // namespace detail

Schedule bcast_scatter_allgather(int ranks, std::size_t count, const std::vector<int>& keep) {
  return detail::bcast_schedule("bcast_scatter_allgather", ranks, count, detail::bcast_scatter_allgather_phase, keep);
}

PlanBounds bcast_scatter_allgather_bounds(int ranks, std::size_t count) {
  if (ranks == 1 || count == 0) return {};
  return {count, static_cast<std::uint32_t>(ranks)};
}

}  // namespace earlybird::coll
