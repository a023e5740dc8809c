// reduce_greedy — the greedy pipelined reduction of Lowery and Langou ("A
// greedy algorithm for optimally pipelining a reduction", arXiv:1310.4645),
// unidirectional version, to rank 0.
//
// The vector is cut into q segments, reduced strictly in order. Time runs in
// steps; in a step a rank takes part in at most one transfer (sends or
// receives: the unidirectional model). Every rank works on one segment at a
// time, the lowest one it has not yet handed on. In each step the ranks
// working on the same segment pair up as in a binomial tree (sorted by rank,
// neighbours pair, the higher sends its partial to the lower, which folds it
// in); an odd one waits. A rank that has sent segment s moves on to s+1, so
// the ranks that finished sending s start a binomial-type reduction of s+1
// among themselves while the others still reduce s. Rank 0 never sends; it
// moves on when its segment holds all P contributions.
//
// State vector: each rank counts, per segment, the contributions its partial
// combines: 1 (its input) for segments it has not reached, 0 for those it
// has sent, and a growing count for the one it works on; rank 0 is done with
// a segment at P (equivalently, P - count contributions remain: counting down
// to 0). Only the entry of the current segment changes, so a rank stores that
// one entry (plus where its partial lives and its lowest contributing rank).
//
// With one segment this is exactly reduce_binomial (same steps, same slots,
// same dependencies). It needs a commutative operator: once segments overlap,
// a rank may fold partials whose rank sets interleave ({1,3} with {2}).
//
// Cost (Hockney, q = ceil(m / ms) segments): T steps of (alpha + beta ms +
// gamma ms), T = ceil(log2 P) for q = 1 and about 2q + log2 P for many
// segments (docs/algorithms.md has measured T against the chain and
// binomial); every rank r != 0 puts each segment once (q puts, `count`
// elements); the ranks together reduce (P-1) * count elements.
//
// Limitations:
//   - commutative operators only (above).
//   - scratch: each receive gets a fresh slot of its segment's length (no
//     acknowledgement flags); a rank needs (elements it receives) scratch,
//     ceil(log2 P) * count on rank 0 for one segment.
//   - the schedule is computed by simulating T steps: O(T P log P) time.
//
// State for P = 4, segments a and b (partial each rank works on):
//   step   rank 0        rank 1        rank 2        rank 3
//   start  a{0}          a{1}          a{2}          a{3}
//   1      a{0,1}        sent a: b{1}  a{2,3}        sent a: b{3}   1->0, 3->2
//   2      a{0-3}, done  b{1,3}        sent a: b{2}  sent b         2->0, 3->1
//   3      b{0,1,3}      sent b        b{2}          -              1->0
//   4      b{0-3}, done  -             sent b        -              2->0
#include "reduce_phases.hpp"

#include "../schedule/build_schedule.hpp"

#include <earlybird/collectives/partition.hpp>
#include <earlybird/collectives/reduce.hpp>

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace earlybird::coll {
namespace detail {
namespace {

// What one rank holds of the segment it works on.
struct RankState {
  std::size_t segment = 0;  // index of the current segment; q when done
  int contributions = 1;    // the state vector's entry for `segment`
  int lowest = 0;           // lowest rank whose contribution it holds
  bool received = false;    // false: the partial is still the input
  std::size_t partial_at = 0;    // scratch offset of the partial once received
  std::size_t scratch_used = 0;  // next free scratch element
};

struct Transfer {
  int from = 0;
  int to = 0;
};

class GreedyReduce {
 public:
  // Reduces the inputs of ranks 0 .. ranks-1 (a prefix of the Builder's).
  GreedyReduce(Builder& b, int ranks, std::size_t segment_elems)
      : b_(b),
        ranks_(ranks),
        segments_(segments({0, b.count()}, segment_elems)),
        state_(static_cast<std::size_t>(ranks)) {
    for (int r = 0; r < ranks; ++r) at(r).lowest = r;
  }

  // Rank 0 never leaves a segment before all its holders have met it, so
  // every step pairs someone until rank 0 is done.
  void run() {
    while (at(0).segment < segments_.size()) {
      const std::vector<Transfer> pairs = pair_up();
      if (pairs.empty()) throw std::logic_error("reduce_greedy: a step without transfers");
      for (const Transfer& t : pairs) transfer(t);
    }
  }

 private:
  // The pairs of this step: ranks on the same segment, in rank order,
  // neighbours paired, the higher sending to the lower.
  std::vector<Transfer> pair_up() const {
    std::vector<int> order;
    for (int r = 0; r < ranks_; ++r)
      if (at(r).segment < segments_.size()) order.push_back(r);
    std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return at(x).segment < at(y).segment; });
    std::vector<Transfer> pairs;
    for (std::size_t i = 0; i + 1 < order.size();) {
      if (at(order[i]).segment == at(order[i + 1]).segment) {
        pairs.push_back({order[i + 1], order[i]});
        i += 2;
      } else {
        ++i;
      }
    }
    return pairs;
  }

  // `from` puts its partial into a fresh slot of `to`, which folds it in with
  // the lower ranks' partial on the left.
  void transfer(const Transfer& t) {
    RankState& receiver = at(t.to);
    const RankState& sender = at(t.from);
    const Range seg = segments_[receiver.segment];
    const Slot landing{t.to, Buffer::scratch, {receiver.scratch_used, seg.count}};
    receiver.scratch_used += seg.count;
    b_.put(partial_of(t.from, seg), landing);
    const Slot mine = partial_of(t.to, seg);
    const Slot acc = t.to == 0 ? Slot{0, Buffer::output, seg} : receiver.received ? mine : landing;
    if (receiver.lowest < sender.lowest)
      b_.reduce(acc, mine, landing);
    else
      b_.reduce(acc, landing, mine);
    if (!receiver.received) receiver.partial_at = landing.range.begin;
    receiver.received = true;
    receiver.contributions += sender.contributions;
    receiver.lowest = std::min(receiver.lowest, sender.lowest);
    next_segment(t.from);
    if (t.to == 0 && receiver.contributions == ranks_) next_segment(0);
  }

  Slot partial_of(int rank, Range seg) const {
    const RankState& s = at(rank);
    if (!s.received) return {rank, Buffer::input, seg};
    if (rank == 0) return {0, Buffer::output, seg};
    return {rank, Buffer::scratch, {s.partial_at, seg.count}};
  }

  void next_segment(int rank) {
    RankState& s = at(rank);
    s = {s.segment + 1, 1, rank, false, 0, s.scratch_used};
  }

  RankState& at(int rank) { return state_[static_cast<std::size_t>(rank)]; }
  const RankState& at(int rank) const { return state_[static_cast<std::size_t>(rank)]; }

  Builder& b_;
  int ranks_;
  std::vector<Range> segments_;
  std::vector<RankState> state_;
};

}  // namespace

void reduce_greedy_phase(Builder& b, std::size_t segment_elems) { reduce_greedy_phase(b, b.ranks(), segment_elems); }

void reduce_greedy_phase(Builder& b, int ranks, std::size_t segment_elems) {
  if (ranks < 1 || ranks > b.ranks()) throw std::invalid_argument("reduce_greedy: ranks must be in 1 .. P");
  if (ranks == 1) {
    b.copy({0, Buffer::output, {0, b.count()}}, {0, Buffer::input, {0, b.count()}});
    return;
  }
  GreedyReduce(b, ranks, segment_elems).run();
}

}  // namespace detail

Schedule reduce_greedy(int ranks, std::size_t count, std::size_t segment_elems) {
  return detail::build_schedule("reduce_greedy", Collective::reduce, ranks, count,
                                [=](Builder& b) { detail::reduce_greedy_phase(b, segment_elems); });
}

}  // namespace earlybird::coll
