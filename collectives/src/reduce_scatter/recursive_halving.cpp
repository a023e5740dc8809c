// reduce_scatter_recursive_halving — butterfly with vector halving: in the
// round of distance d = P/2, P/4, ..., 1 rank r keeps the half of its current
// blocks that contains block r, puts the other half to rank r XOR d (whose
// half it is), and adds the half it receives to its own partial sums.
//
// Any P (the upper fold of ../topology/fold.hpp): with P' =
// 2^floor(log2 P) and e = P - P', extra rank P'+i first puts its whole input
// to rank i, which adds it to its own; the butterfly halves over
// super-blocks (rank q < e answers for blocks q and P'+q: two puts and two
// reduces per round where a half holds extra blocks); at the end rank i puts
// the finished block P'+i to rank P'+i.
//
// Cost (Hockney, m bytes = one rank's input):
//   P = P':  log2 P alpha + ((P-1)/P)(beta + gamma) m
//   P != P': (log2 P' + 2) alpha + (1 + (P-1)/P)(beta + gamma) m + beta m/P
//            (the fold moves and reduces a whole input)
//   per rank, P = P': log2 P puts, (P-1) count elements sent and reduced,
//   rounds log2 P.
//   P != P', core rank r in the round of distance d, with x(h) =
//   clamp(e - h, 0, d) the extra blocks of the half starting at super-block
//   h, sent half s = (r XOR d) & ~(d-1), kept half k = r & ~(d-1):
//   1 + [x(s) > 0] puts of (d + x(s)) count elements, (d + x(k)) count
//   reduced; rank r < e also reduces the fold (P count) and sends the
//   unfold (1 put of count); an extra rank: 1 put of P count, nothing
//   reduced; rounds (dependency depth) log2 P' + 1 + [e > P'/2]: when every
//   rank that takes a fold is in the lower half, the fold overlaps the first
//   round (the upper half's puts do not wait for it).
//
// Limitations:
//   - needs a commutative op: round 0 pairs ranks r and r XOR P/2, so the
//     partial sums never cover rank intervals.
//   - scratch per rank: one landing region per round (d + min(d, e) blocks
//     for distance d, reduced in place, never reused: no acknowledgement
//     flags), and P blocks more on a rank that takes a fold.
//   - in place (input aliases output): the output is written once, by the
//     last round, after the rank's every read of its input.
//   - planned per rank (AlgorithmParams::keep: sends touching no kept rank
//     and the other ranks' reduces are skipped), P = 16384 in ~5 ms.
//
// State for P = 4 (blocks each rank holds partial sums of, and over whom):
//   round        rank 0        rank 1        rank 2        rank 3
//   d=2 (xor 2)  b0 b1:{0,2}   b0 b1:{1,3}   b2 b3:{0,2}   b2 b3:{1,3}
//   d=1 (xor 1)  b0:all        b1:all        b2:all        b3:all
// For P = 5 rank 4 first adds its input to rank 0's, rank 0 carries blocks
// {0, 4} through the butterfly and finally puts block 4 to rank 4.
#include "../schedule/build_schedule.hpp"
#include "../topology/fold.hpp"

#include <earlybird/collectives/builder.hpp>
#include <earlybird/collectives/reduce_scatter.hpp>

#include <algorithm>
#include <vector>

namespace earlybird::coll {
namespace {

// Blocks of the landing region of the round of distance d: d core and up to
// d extra blocks.
int region_blocks(const detail::Fold& folded, int d) { return d + std::min(d, folded.extra()); }
// All rounds' landing regions, one after another from scratch offset 0.
int landing_blocks(const detail::Fold& folded) {
  int total = 0;
  for (int d = folded.core() / 2; d >= 1; d /= 2) total += region_blocks(folded, d);
  return total;
}

// Where a rank keeps its partial sums of super-blocks [first, ...): core
// block q at core_at + (q - first) * count, extra block P'+q at
// extra_at + (q - first) * count, in `buffer`.
struct Held {
  Buffer buffer = Buffer::input;
  std::size_t core_at = 0;
  std::size_t extra_at = 0;
  int first = 0;
};

class RecursiveHalving {
 public:
  explicit RecursiveHalving(Builder& b)
      : b_(b), n_(b.count()), folded_(b.ranks(), detail::FoldPairing::upper), held_(static_cast<std::size_t>(b.ranks())) {}

  void run() {
    for (Held& h : held_) h = {Buffer::input, 0, elems_of(folded_.core()), 0};
    for (int i = 0; i < folded_.extra(); ++i) fold(i, landings_elems());
    std::size_t landing = 0;
    for (int d = folded_.core() / 2; d >= 1; d /= 2) {
      halving_round(d, landing);
      landing += region_elems(d);
    }
    for (int i = 0; i < folded_.extra(); ++i) unfold(i);
    if (b_.ranks() == 1) b_.copy({0, Buffer::output, {0, n_}}, {0, Buffer::input, {0, n_}});
  }

 private:
  // Rank i adds extra rank P'+i's whole input to its own, at `at` in scratch
  // (after the rounds' landing regions).
  void fold(int i, std::size_t at) {
    const std::size_t all = static_cast<std::size_t>(b_.ranks()) * n_;
    const Slot sum{i, Buffer::scratch, {at, all}};
    b_.put({folded_.folded_rank(i), Buffer::input, {0, all}}, sum);
    b_.reduce(sum, {i, Buffer::input, {0, all}}, sum);
    held_[static_cast<std::size_t>(i)] = {Buffer::scratch, at, at + elems_of(folded_.core()), 0};
  }

  // Every core rank sends first, then reduces: no send reads what a reduce
  // of the same round writes. A focused build skips the sends that touch no
  // kept rank and the others' reduces, but keeps every rank's bookkeeping
  // (held_).
  void halving_round(int d, std::size_t landing) {
    for (int r = 0; r < folded_.core(); ++r)
      if (b_.keeps(r) || b_.keeps(r ^ d)) send_half(r, r ^ d, d, landing);
    for (int r = 0; r < folded_.core(); ++r) reduce_half(r, d, landing);
  }

  void send_half(int r, int peer, int d, std::size_t landing) {
    const int half = peer & ~(d - 1);
    const detail::BlockRuns runs = folded_.super_blocks(half, d);
    const Held& h = held_[static_cast<std::size_t>(r)];
    b_.put(core_part(r, h, half, runs), {peer, Buffer::scratch, {landing, elems_of(runs.core_count)}});
    b_.put(extra_part(r, h, half, runs), {peer, Buffer::scratch, {landing + elems_of(d), elems_of(runs.extra_count)}});
  }

  // Partial sums of the kept half = own partial (left) op received (right),
  // in the landing itself; the last round's core block goes to the output.
  void reduce_half(int r, int d, std::size_t landing) {
    const int half = r & ~(d - 1);
    const detail::BlockRuns runs = folded_.super_blocks(half, d);
    Held& h = held_[static_cast<std::size_t>(r)];
    if (b_.keeps(r)) {
      const Slot core_in{r, Buffer::scratch, {landing, elems_of(runs.core_count)}};
      const Slot extra_in{r, Buffer::scratch, {landing + elems_of(d), elems_of(runs.extra_count)}};
      b_.reduce(d == 1 ? Slot{r, Buffer::output, {0, n_}} : core_in, core_part(r, h, half, runs), core_in);
      b_.reduce(extra_in, extra_part(r, h, half, runs), extra_in);
    }
    h = {Buffer::scratch, landing, landing + elems_of(d), half};
  }

  // Rank i's finished block P'+i goes to rank P'+i.
  void unfold(int i) {
    const Held& h = held_[static_cast<std::size_t>(i)];
    const int extra_rank = folded_.folded_rank(i);
    const Slot landing{extra_rank, Buffer::scratch, {0, n_}};
    b_.put({i, Buffer::scratch, {h.extra_at, n_}}, landing);
    b_.copy({extra_rank, Buffer::output, {0, n_}}, landing);
  }

  Slot core_part(int r, const Held& h, int half, const detail::BlockRuns& runs) const {
    return {r, h.buffer, {h.core_at + elems_of(half - h.first), elems_of(runs.core_count)}};
  }
  Slot extra_part(int r, const Held& h, int half, const detail::BlockRuns& runs) const {
    return {r, h.buffer, {h.extra_at + elems_of(half - h.first), elems_of(runs.extra_count)}};
  }

  std::size_t region_elems(int d) const { return elems_of(region_blocks(folded_, d)); }
  std::size_t landings_elems() const { return elems_of(landing_blocks(folded_)); }
  std::size_t elems_of(int blocks) const { return static_cast<std::size_t>(blocks) * n_; }

  Builder& b_;
  std::size_t n_;
  detail::Fold folded_;
  std::vector<Held> held_;
};

}  // namespace

Schedule reduce_scatter_recursive_halving(int ranks, std::size_t count, const std::vector<int>& keep) {
  return detail::build_schedule("reduce_scatter_recursive_halving", Collective::reduce_scatter, ranks, count,
                                [](Builder& b) { RecursiveHalving(b).run(); }, keep);
}

// Scratch: every round's landing region, and P blocks more on a rank that
// takes a fold. Flags: a core rank receives a fold and two runs per round, an
// extra rank its block.
PlanBounds reduce_scatter_recursive_halving_bounds(int ranks, std::size_t count) {
  if (count == 0 || ranks == 1) return {};
  const detail::Fold folded(ranks, detail::FoldPairing::upper);
  const int blocks = landing_blocks(folded) + (folded.extra() > 0 ? ranks : 0);
  return {static_cast<std::size_t>(blocks) * count, static_cast<std::uint32_t>(2 * folded.rounds() + 1)};
}

}  // namespace earlybird::coll
