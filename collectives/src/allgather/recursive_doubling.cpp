// allgather_recursive_doubling — butterfly: in round k rank r swaps with
// rank r XOR 2^k every block it has so far (its aligned group of 2^k blocks),
// so the blocks held double each round.
//
// Any P (the upper fold of ../topology/fold.hpp): with P' = 2^floor(log2 P) and
// e = P - P', extra rank P'+i first puts its block to rank i and sits out;
// the butterfly runs over super-blocks (rank q < e carries blocks q and
// P'+q: two puts per round where a group holds extra blocks); at the end
// rank i puts every block but P'+i's own to rank P'+i (one or two puts).
//
// Cost (Hockney, m bytes = the gathered output):
//   P = P':  log2 P alpha + ((P-1)/P) beta m
//   P != P': (log2 P' + 2) alpha + about 2((P-1)/P) beta m (the unfold
//            resends almost everything to the extra ranks)
//   per rank, P = P': log2 P puts, (P-1) count elements, rounds log2 P.
//   P != P', core rank r in round k (group first g = r & ~(2^k-1), its extra
//   blocks x = clamp(e - g, 0, 2^k)): 1 + [x > 0] puts of (2^k + x) count
//   elements; rank r < e also sends the unfold: 1 + [r < e-1] puts,
//   (P-1) count elements; an extra rank: 1 put of `count`;
//   rounds (dependency depth) log2 P' + 1 + [e > P'/2]: when no extra block
//   sits in the upper half, the last round carries none to the ranks that
//   unfold, so the unfold waits only for the fold's one extra round.
// Fewest rounds for powers of two; the ring or bruck for other P.
//
// Limitations: scratch of P blocks per rank, laid out as the output (block j
// at j*count; never reused: no acknowledgement flags). Sends go from scratch:
// a rank first copies its input into scratch and into its output block, and
// reads input nowhere else, so in-place calls are safe.
// Planned per rank (AlgorithmParams::keep: the exchanges that touch no kept
// rank are skipped), P = 16384 in ~6 ms.
//
// State for P = 4 (blocks each rank holds):
//   round        rank 0     rank 1     rank 2     rank 3
//   start        0          1          2          3
//   k=0 (xor 1)  0 1        0 1        2 3        2 3
//   k=1 (xor 2)  0-3        0-3        0-3        0-3
// For P = 5 rank 4 first hands block 4 to rank 0, which carries blocks
// {0, 4} through the butterfly and returns blocks 0-3 to rank 4 at the end.
#include "../schedule/block_slots.hpp"
#include "../schedule/build_schedule.hpp"
#include "../topology/fold.hpp"

#include <earlybird/collectives/allgather.hpp>
#include <earlybird/collectives/builder.hpp>

namespace earlybird::coll {
namespace {

class RecursiveDoubling : detail::BlockGenerator {
 public:
  explicit RecursiveDoubling(Builder& b) : BlockGenerator(b), folded_(b.ranks(), detail::FoldPairing::upper) {}

  void run() {
    for (int r = 0; r < b_.ranks(); ++r) start(r);
    for (int dist = 1; dist < folded_.core(); dist *= 2)
      for (int r = 0; r < folded_.core(); ++r)
        if (b_.keeps(r) || b_.keeps(r ^ dist)) exchange(r, r ^ dist, dist);  // else a focused build drops it
    for (int i = 0; i < folded_.extra(); ++i) unfold(i);
  }

 private:
  // A core rank keeps its block in scratch to send from; an extra rank folds
  // it into its partner. Input is read here only, before any output write.
  void start(int r) {
    if (folded_.sits_out(r))
      send_blocks(r, folded_.folds_into(r), r, 1);
    else
      b_.copy(blocks(r, Buffer::scratch, r, 1), input_of(r));
    b_.copy(blocks(r, Buffer::output, r, 1), input_of(r));
  }

  void exchange(int r, int peer, int group_size) {
    const detail::BlockRuns runs = folded_.super_blocks(r & ~(group_size - 1), group_size);
    send_blocks(r, peer, runs.core_first, runs.core_count);
    send_blocks(r, peer, runs.extra_first, runs.extra_count);
  }

  // Core rank i returns every block but the extra rank's own.
  void unfold(int i) {
    const int extra_rank = folded_.folded_rank(i);
    send_blocks(i, extra_rank, 0, extra_rank);
    send_blocks(i, extra_rank, extra_rank + 1, b_.ranks() - extra_rank - 1);
  }

  // Blocks [first, first + n) from `from` (its scratch, or its input for a
  // fold) into `to`'s scratch, which copies them into its output.
  void send_blocks(int from, int to, int first, int n) {
    const Slot landing = blocks(to, Buffer::scratch, first, n);
    b_.put(sent_from(from, first, n), landing);
    b_.copy(blocks(to, Buffer::output, first, n), landing);
  }

  // An extra rank only ever sends its own block, straight from its input.
  Slot sent_from(int rank, int first, int n) const {
    if (folded_.sits_out(rank)) return input_of(rank);
    return blocks(rank, Buffer::scratch, first, n);
  }

  detail::Fold folded_;
};

}  // namespace

Schedule allgather_recursive_doubling(int ranks, std::size_t count, const std::vector<int>& keep) {
  return detail::build_schedule("allgather_recursive_doubling", Collective::allgather, ranks, count,
                                [](Builder& b) { RecursiveDoubling(b).run(); }, keep);
}

// Scratch: P blocks. Flags: a core rank receives its extra partner's block
// and at most two runs per round, an extra rank two runs at the end.
PlanBounds allgather_recursive_doubling_bounds(int ranks, std::size_t count) {
  if (count == 0) return {};
  const detail::Fold folded(ranks, detail::FoldPairing::upper);
  return {static_cast<std::size_t>(ranks) * count, static_cast<std::uint32_t>(ranks == 1 ? 0 : 2 * folded.rounds() + 2)};
}

}  // namespace earlybird::coll
