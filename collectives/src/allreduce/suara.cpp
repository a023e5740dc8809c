// allreduce_suara — SUARA2, multi-step allreduce over a process grid
// (Nuriyev et al. 2023; the project's seed 003). P = R x C: rank r sits in
// row r / C, column r % C. Step 1: the R rows (C consecutive ranks each) run
// an allreduce in parallel; step 2: the C columns (R ranks C apart) run one
// on the rows' results, in place on the output. Each step's schedule is a
// catalogue algorithm's, written for its group's ranks and replayed onto them
// (its scratch in a fresh region per step, so no step reuses another's).
//
// Choice (suara_grid): over every divisor C of P and every pair of candidate
// algorithms (ring, segmented_ring, recursive_doubling, rabenseifner,
// binomial), the least T = T_row(C, m) + T_column(P/C, m), each T the schedule
// simulator's prediction (simulate.hpp) under seed 003's machine: alpha
// 1.5 us, beta 6.25e-11 s/B, gamma 2e-10 s/B (copies at gamma). The two terms
// are independent, so the best algorithm per step size is found once: |A|
// simulations per divisor. C = 1 or P is the flat algorithm: SUARA never
// predicts worse than the best flat candidate.
//
// Cost (Hockney): T_a(C, m) + T_b(P/C, m) for the chosen a and b. With the
// ring in both steps and C = R = sqrt(P):
//   4(sqrt(P) - 1) alpha + 4(sqrt(P) - 1)/sqrt(P) m beta + 2(sqrt(P) - 1)/sqrt(P) m gamma
// against the flat ring's 2(P - 1) alpha + 2(P - 1)/P m (beta + gamma / 2):
// latency terms fall like sqrt(P), the bandwidth terms at most double.
// Per rank: the row algorithm's puts, elements sent and reduced at C ranks
// plus the column algorithm's at R ranks; rounds: the sum of the two.
//
// Limitations: a grid needs a divisor of P: a prime P gets the flat
// algorithm (no padding with identity ranks, no uneven grids); the model is
// the seed's machine until calibrated costs exist (issue 12); needs a
// commutative operator (the columns combine rows out of rank order); two
// steps only (L = 2); every step moves the whole vector.
//
// State for P = 4 (R = C = 2, recursive doubling in both steps; what each
// rank's output holds):
//   step             rank 0   rank 1   rank 2   rank 3
//   start            {0}      {1}      {2}      {3}
//   rows (0,1)(2,3)  {0,1}    {0,1}    {2,3}    {2,3}
//   columns (0,2)    {0-3}             {0-3}
//   columns (1,3)             {0-3}             {0-3}
#include <earlybird/collectives/allreduce.hpp>
#include <earlybird/collectives/builder.hpp>
#include <earlybird/collectives/simulate.hpp>

#include <array>
#include <limits>
#include <vector>

namespace earlybird::coll {
namespace {

constexpr CostModel kSeedMachine{1.5e-6, 6.25e-11, 2e-10};
constexpr std::array<std::string_view, 5> kCandidates{"ring", "segmented_ring", "recursive_doubling", "rabenseifner",
                                                       "binomial"};

struct StepChoice {
  std::string_view algorithm;  // empty: one rank, nothing to do
  double predicted_s = 0;
};

StepChoice best_step(int ranks, std::size_t count, std::size_t elem_bytes) {
  if (ranks == 1) return {};
  StepChoice best{{}, std::numeric_limits<double>::max()};
  for (std::string_view name : kCandidates) {
    const Schedule s = find_allreduce(name)->make(ranks, count, AlgorithmParams{}, elem_bytes);
    const double t = simulate(s, elem_bytes, kSeedMachine).time;
    if (t < best.predicted_s) best = {name, t};
  }
  return best;
}

// Slot of a group's schedule -> slot of the whole schedule: virtual rank k
// of the group is `group[k]`; the group's input is `input_as` (the user's
// input in the first step, the output the first step left in the second).
Slot placed(Slot slot, const std::vector<int>& group, Buffer input_as) {
  slot.rank = group[static_cast<std::size_t>(slot.rank)];
  if (slot.buffer == Buffer::input) slot.buffer = input_as;
  return slot;
}

// Appends `sub`'s steps, run by the ranks of `group`. A copy that the mapping
// turns into a copy onto itself (in-place steps) is dropped.
void append_on_group(Builder& b, const Schedule& sub, const std::vector<int>& group, Buffer input_as) {
  for (const Step& step : sub.steps()) {
    const Slot src = placed(step.src, group, input_as);
    const Slot dst = placed(step.dst, group, input_as);
    switch (step.kind) {
      case StepKind::put: b.put(src, dst); break;
      case StepKind::get: b.get(src, dst); break;
      case StepKind::reduce: b.reduce(dst, placed(step.left, group, input_as), src); break;
      case StepKind::copy:
        if (src.buffer != dst.buffer || src.range != dst.range) b.copy(dst, src);
        break;
    }
  }
}

// Every group of one step: rows are `size` consecutive ranks; columns take
// every `stride`-th rank.
void append_step(Builder& b, std::string_view algorithm, int groups, int size, int first_stride, int member_stride,
                 Buffer input_as, std::size_t count, std::size_t elem_bytes) {
  if (algorithm.empty()) return;
  const Schedule sub = find_allreduce(algorithm)->make(size, count, AlgorithmParams{}, elem_bytes);
  for (int g = 0; g < groups; ++g) {
    std::vector<int> group;
    for (int k = 0; k < size; ++k) group.push_back(g * first_stride + k * member_stride);
    append_on_group(b, sub, group, input_as);
  }
  b.begin_scratch_region();
}

}  // namespace

SuaraGrid suara_grid(int ranks, std::size_t count, std::size_t elem_bytes) {
  SuaraGrid best{ranks, {}, {}, std::numeric_limits<double>::max()};
  for (int row = 1; row <= ranks; ++row) {
    if (ranks % row != 0) continue;
    const StepChoice rows = best_step(row, count, elem_bytes);
    const StepChoice columns = best_step(ranks / row, count, elem_bytes);
    const double t = rows.predicted_s + columns.predicted_s;
    if (t < best.predicted_s) best = {row, rows.algorithm, columns.algorithm, t};
  }
  return best;
}

Schedule allreduce_suara(int ranks, std::size_t count, std::size_t elem_bytes) {
  Builder b("allreduce_suara", ranks, count);
  if (count > 0 && ranks > 1) {
    const SuaraGrid grid = suara_grid(ranks, count, elem_bytes);
    const int rows = ranks / grid.row_size;
    append_step(b, grid.row_algorithm, rows, grid.row_size, grid.row_size, 1, Buffer::input, count, elem_bytes);
    const Buffer column_input = grid.row_algorithm.empty() ? Buffer::input : Buffer::output;
    append_step(b, grid.column_algorithm, grid.row_size, rows, 1, grid.row_size, column_input, count, elem_bytes);
  }
  b.copy_unwritten_output();  // P = 1: output = input
  return std::move(b).finish();
}

}  // namespace earlybird::coll
