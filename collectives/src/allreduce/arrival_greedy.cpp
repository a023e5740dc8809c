// allreduce_arrival_greedy — an arrival-driven Lowery–Langou greedy reduction
// followed by a broadcast. Virtual rank id is the id-th rank to arrive (the
// catalogue entry `arrival_greedy` is bound by arrival tickets). The ranks'
// availability times are their arrivals, and the one fact a ticket order
// guarantees is who comes last, so the schedule is the greedy with the last
// rank available only after everyone else:
//
//   1. early subtrees: ids 0 .. P-2 run the greedy pipelined reduction among
//      themselves (reduce_greedy_phase over the first P-1 ranks,
//      ../reduce/greedy.cpp), to id 0's output: in ticket order, so the
//      earliest ranks pair first (id 0 folds in id 1, then the subtree of ids
//      {2, 3}, then {4 .. 7}, ...) and a later rank's subtree joins later;
//   2. the late join: per segment, id 0 puts the early partial into id P-1's
//      scratch — the put needs nothing from the target, so it lands while
//      P-1 is still computing — and P-1 folds its input in (one reduce);
//   3. the broadcast: id P-1 is the root of a pipelined heap binary tree over
//      (P-1, 0, 1, ..., P-2) (the binary_tree bcast, relabelled; it starts
//      from P-1's output), so each segment goes out as soon as P-1 has it.
// Nothing any other rank reduces waits on the last rank; it reduces once per
// segment and sends each segment to at most two ranks.
//
// Why tickets and not estimates: the binding must put the truly last rank at
// id P-1 for step 2 to pay off, and tickets are the true arrival order with
// no estimate to be missing or wrong; the greedy needs no arrival times among
// the early ranks (data dependencies pace them as they come). An estimate
// order would also work (any order is correct), but a wrong estimate puts an
// early rank at P-1, where everybody waits for it.
//
// Cost (Hockney, m bytes, q = ceil(m / ms) segments of ms bytes, G(n) the
// greedy's step count over n ranks: ceil(log2 n) for q = 1, about 2q + log2 n
// for many segments (greedy.cpp), h = floor(log2 P)):
//   everyone on time: <= (G(P-1) + 1)(alpha + beta ms + gamma ms)
//                        + 2(h + q - 1)(alpha + beta ms)
//     (the phases overlap per segment, so the sum is an upper bound): one
//     step (the join) more than greedy_reduce_bcast's when ceil(log2(P-1))
//     = ceil(log2 P), i.e. unless P-1 is a power of two. Rounds (dependency
//     depth, q = 1): floor(log2(P-1)) + 1 + h, greedy_reduce_bcast's 2h when
//     P is a power of two, one more otherwise.
//   after the last arrival, when the early ranks are done by then:
//     q (gamma ms) + 2(h + q - 1)(alpha + beta ms) ~ gamma m + 2 beta m
//     (its reduces interleave with its two sends per segment) — no transfer
//     of its input, against the sorted linear tree's return chain of P-2 hops.
//   per rank: the early ranks' greedy puts and reduces ((P-2) count reduced
//   among them; every id in 1 .. P-2 puts each segment once), id 0 one more
//   put of count (the join); id P-1 reduces count; the broadcast's puts
//   (count per child, at most 2 children) and copies (count on every id but
//   P-1). In all, 2(P-1) count elements sent, (P-1) count reduced.
//
// Limitations:
//   - needs a commutative operator (arrival order is not rank order, and the
//     greedy interleaves rank sets).
//   - only the last arrival is singled out: a second late rank delays its
//     greedy subtree and id 0's fold of it, so with several late ranks the
//     tail after the last is as above but the early phase may end late.
//   - when nobody is late, up to one step more than greedy_reduce_bcast
//     (the join; above).
//   - scratch: the greedy's (up to ceil(log2(P-1)) count on id 0 for one
//     segment), count on id P-1 (the join), then a fresh region of count on
//     every other id (the broadcast): no acknowledgement flags.
//
// State for P = 4, one segment, id 3 late (sets of ids each holds):
//   step            id 0      id 1      id 2      id 3
//   start           {0}       {1}       {2}       (not there)
//   greedy 1        {0,1}     sent      {2}                 1->0
//   greedy 2        {0-2}               sent                2->0
//   join            sent                          {0-2} in scratch
//   id 3 arrives                                  {0-3}     (one reduce)
//   bcast 1         {0-3}     {0-3}                         3->0, 3->1
//   bcast 2                             {0-3}               0->2
// (the broadcast's heap tree: 3 -> {0, 1}, 0 -> {2}).
#include "../bcast/bcast_phases.hpp"
#include "../reduce/reduce_phases.hpp"
#include "../schedule/build_schedule.hpp"
#include "../topology/tree.hpp"

#include <earlybird/collectives/allreduce.hpp>
#include <earlybird/collectives/partition.hpp>

#include <numeric>
#include <vector>

namespace earlybird::coll {
namespace detail {
namespace {

// Where id 0 holds the early ranks' partial of `seg`: its input when it is
// the only early rank (P = 2), else its output, where the greedy left it.
Slot early_partial(int early_ranks, Range seg) { return {0, early_ranks == 1 ? Buffer::input : Buffer::output, seg}; }

// The last rank joins: per segment, id 0 puts the early partial into its
// scratch, and it folds its own input in (on the right) into its output.
void join_last(Builder& b, std::size_t segment_elems) {
  const int last = b.ranks() - 1;
  for (const Range seg : segments({0, b.count()}, segment_elems)) {
    const Slot landing{last, Buffer::scratch, seg};
    b.put(early_partial(last, seg), landing);
    b.reduce({last, Buffer::output, seg}, landing, {last, Buffer::input, seg});
  }
}

// Tree node 0 is the last rank, node i the (i-1)-th: (P-1, 0, 1, ..., P-2).
std::vector<int> last_rank_first(int ranks) {
  std::vector<int> order(static_cast<std::size_t>(ranks));
  order[0] = ranks - 1;
  std::iota(order.begin() + 1, order.end(), 0);
  return order;
}

// The result goes from the last rank's output down the heap binary tree, in
// a fresh scratch region (nothing of the reduce is reused).
void bcast_from_last(Builder& b, std::size_t segment_elems) {
  b.begin_scratch_region();
  relabelled_tree_bcast_phase(b, Buffer::output, heap_binary_tree(b.ranks()), ChildOrder::rank_order, segment_elems,
                              last_rank_first(b.ranks()));
}

void arrival_greedy_phases(Builder& b, std::size_t segment_elems) {
  if (b.ranks() > 1) {
    const int early = b.ranks() - 1;
    if (early > 1) reduce_greedy_phase(b, early, segment_elems);
    join_last(b, segment_elems);
    bcast_from_last(b, segment_elems);
  }
  b.copy_unwritten_output();  // P = 1: output = input
}

}  // namespace
}  // namespace detail

Schedule allreduce_arrival_greedy(int ranks, std::size_t count, std::size_t segment_elems) {
  return detail::build_schedule("allreduce_arrival_greedy", Collective::allreduce, ranks, count,
                                [=](Builder& b) { detail::arrival_greedy_phases(b, segment_elems); });
}

}  // namespace earlybird::coll
