// allreduce_suara — SUARA, multi-step allreduce over a process grid
// (Nuriyev et al. 2023; the project's seed 003). P = p_1 x ... x p_L: rank r
// has coordinates (r mod p_1, (r / p_1) mod p_2, ...). Step k runs an
// allreduce in every group of p_k ranks that differ only in coordinate k
// (step 1: p_1 consecutive ranks; step k: ranks p_1...p_(k-1) apart), the
// first step from the input, later ones in place on the output. After step
// k every rank holds the sum over the ranks that differ from it in
// coordinates 1..k only; after step L, over all. Each step's schedule is a
// catalogue algorithm's, written for p_k ranks and replayed onto each group
// (its scratch in a fresh region per step, so no step reuses another's).
//
// Choice (suara_grid): the factorization of P and the algorithm of each
// step (ring, segmented_ring, recursive_doubling, rabenseifner, binomial)
// with the least predicted sum of step times, each the schedule simulator's
// prediction (simulate.hpp) under seed 003's machine by default: alpha
// 1.5 us, beta 6.25e-11 s/B, gamma 2e-10 s/B (copies at gamma). Steps of
// more than kSuaraLargestRingStep ranks leave out the ring and the segmented
// ring: their global schedules (4n(n - 1) steps) take seconds to build at
// n = 1024 and gigabytes beyond. Under Hockney costs nothing is lost at a
// power-of-two n (rabenseifner has the ring's beta and gamma terms and
// 2 log2 n alphas instead of 2(n - 1)); at other n a ring might have won.
// They leave out the binomial too: its schedule is never rank-symmetric, so
// it is simulated whole, and under a one-level model it never beats
// recursive doubling (its reduce alone costs recursive doubling's rounds,
// and its bcast adds ceil(log2 n) more transfers; a unit test checks the
// simulator agrees for n up to 96).
// A step's time depends on its size only, so the best algorithm per size is
// simulated once per divisor of P, and the best grid of n ranks is the
// better of one step of n and, for each divisor d of n, a step of d then the
// best grid of n / d (memoised over the divisors of P); a grid of more steps
// must predict less by more than rounding. One step (L = 1) is the flat
// algorithm: SUARA never predicts worse than the best flat candidate. A
// rank-symmetric candidate is simulated from one rank's plan, above 256
// ranks also one symmetric at the multiples of P around the count
// (detail::predicted_group_step), the others whole; the grid is remembered
// per (P, count, element size, model) in the process.
//
// Per-rank plans: AlgorithmParams::keep replays only the groups holding a
// kept rank, each step's schedule focused on the group's kept members
// (plan_for_rank's focused builds); the bounds are the steps' bounds added.
//
// Cost (Hockney), with the ring in every step and p_k = P^(1/L):
//   2L(P^(1/L) - 1) alpha + 2L(P^(1/L) - 1)/P^(1/L) m (beta + gamma / 2)
// against the flat ring's 2(P - 1) alpha + 2(P - 1)/P m (beta + gamma / 2):
// latency falls like the L-th root of P, the bandwidth terms grow at most
// L-fold. Per rank: the sum of its steps' puts, elements sent and reduced and
// rounds.
//
// Limitations: a grid needs a factorization of P: a prime P gets the flat
// algorithm (no padding with identity ranks, no uneven grids); the model is
// seed 003's machine, not the calibrated profile (auto compares suara with
// the flat algorithms under the calibrated one); needs a commutative operator
// (later steps combine partial sums out of rank order); every step moves the
// whole vector.
//
// State for P = 4 (p_1 = p_2 = 2, recursive doubling in both steps; what each
// rank's output holds):
//   step             rank 0   rank 1   rank 2   rank 3
//   start            {0}      {1}      {2}      {3}
//   step 1 (0,1)(2,3) {0,1}   {0,1}    {2,3}    {2,3}
//   step 2 (0,2)     {0-3}             {0-3}
//   step 2 (1,3)              {0-3}             {0-3}
#include "group_steps.hpp"
#include "../schedule/remembered.hpp"

#include <earlybird/collectives/allreduce.hpp>
#include <earlybird/collectives/builder.hpp>
#include <earlybird/collectives/simulate.hpp>

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <limits>
#include <vector>

namespace earlybird::coll {
namespace {

bool ring_family(std::string_view name) { return name == "ring" || name == "segmented_ring"; }
// The candidates a step above kSuaraLargestRingStep ranks leaves out.
bool small_steps_only(std::string_view name) { return ring_family(name) || name == "binomial"; }

// The step's schedule over its `size` ranks, focused on the group's kept
// members where the builder keeps only some ranks (Builder::keep_only).
Schedule step_schedule(const Builder& b, const SuaraStep& step, const std::vector<int>& group, std::size_t count,
                       std::size_t elem_bytes) {
  AlgorithmParams params;
  params.keep = detail::kept_members(b, group);
  return find_allreduce(step.algorithm)->make(step.size, count, params, elem_bytes);
}

// Every group of one step: `size` ranks `stride` apart, one group per base
// rank whose coordinate at this step is 0. A whole build makes the step's
// schedule once; a focused one makes it per group holding a kept rank.
void append_step(Builder& b, const SuaraStep& step, int stride, Buffer input_as, std::size_t count,
                 std::size_t elem_bytes) {
  const bool whole = b.kept_ranks().size() == static_cast<std::size_t>(b.ranks());
  std::optional<Schedule> shared;
  for (int base = 0; base < b.ranks(); ++base) {
    if ((base / stride) % step.size != 0) continue;
    std::vector<int> group;
    for (int k = 0; k < step.size; ++k) group.push_back(base + k * stride);
    if (!b.keeps_any(group)) continue;
    if (whole) {
      if (!shared) shared = step_schedule(b, step, group, count, elem_bytes);
      detail::append_on_group(b, *shared, group, input_as);
    } else {
      detail::append_on_group(b, step_schedule(b, step, group, count, elem_bytes), group, input_as);
    }
  }
  b.begin_scratch_region();
}

// Whether a grid of more steps beats one of fewer by more than rounding (a
// grid of recursive doublings predicts the flat recursive doubling's time to
// the last bits: the flat one is kept).
bool clearly_faster(double candidate_s, double incumbent_s) { return candidate_s < incumbent_s * (1 - 1e-9); }

// The best grid for every divisor of P, smallest first (suara_grid).
class GridSearch {
 public:
  GridSearch(int ranks, std::size_t count, std::size_t elem_bytes, const CostModel& model)
      : count_(count), elem_bytes_(elem_bytes), model_(model) {
    for (int d = 1; d <= ranks; ++d)
      if (ranks % d == 0) divisors_.push_back(d);
  }

  const SuaraGrid& best(int ranks) {
    if (auto known = grids_.find(ranks); known != grids_.end()) return known->second;
    SuaraGrid grid;
    if (ranks > 1) {
      const detail::GroupAlgorithm flat = best_step(ranks);
      grid = {{{ranks, flat.name}}, flat.predicted_s};
      for (int d : divisors_) {
        if (d == 1 || d >= ranks || ranks % d != 0) continue;
        const detail::GroupAlgorithm first = best_step(d);
        const SuaraGrid& rest = best(ranks / d);
        if (!clearly_faster(first.predicted_s + rest.predicted_s, grid.predicted_s)) continue;
        grid.steps = {{d, first.name}};
        grid.steps.insert(grid.steps.end(), rest.steps.begin(), rest.steps.end());
        grid.predicted_s = first.predicted_s + rest.predicted_s;
      }
    }
    return grids_.emplace(ranks, std::move(grid)).first->second;
  }

 private:
  const detail::GroupAlgorithm& best_step(int ranks) {
    if (auto known = steps_.find(ranks); known != steps_.end()) return known->second;
    return steps_.emplace(ranks, detail::fastest_group_algorithm(ranks, count_, elem_bytes_, model_)).first->second;
  }

  std::size_t count_, elem_bytes_;
  CostModel model_;
  std::vector<int> divisors_;
  std::map<int, detail::GroupAlgorithm> steps_;
  std::map<int, SuaraGrid> grids_;
};

}  // namespace

std::vector<std::string_view> suara_step_candidates(int ranks) {
  std::vector<std::string_view> names;
  for (std::string_view name : kSuaraCandidates)
    if (!small_steps_only(name) || ranks <= kSuaraLargestRingStep) names.push_back(name);
  return names;
}

SuaraGrid suara_grid(int ranks, std::size_t count, std::size_t elem_bytes, const CostModel& model) {
  struct Key {
    int ranks;
    std::size_t count, elem_bytes;
    CostModel model;
    auto operator<=>(const Key&) const = default;
  };
  static detail::Remembered<Key, SuaraGrid> grids(std::size_t{1} << 12);
  return grids.get({ranks, count, elem_bytes, model},
                   [&] { return GridSearch(ranks, count, elem_bytes, model).best(ranks); });
}

Schedule allreduce_suara_on(const SuaraGrid& grid, int ranks, std::size_t count, std::size_t elem_bytes,
                            const std::vector<int>& keep) {
  int product = 1;
  for (const SuaraStep& step : grid.steps) {
    if (!find_allreduce(step.algorithm))
      throw std::invalid_argument("allreduce_suara: no catalogue allreduce named '" + std::string(step.algorithm) + "'");
    product *= step.size;
  }
  if (count > 0 && product != ranks)
    throw std::invalid_argument("allreduce_suara: the grid's step sizes multiply to " + std::to_string(product) +
                                ", not to the " + std::to_string(ranks) + " ranks");
  Builder b("allreduce_suara", ranks, count);
  b.keep_only(keep);
  if (count > 0) {
    int stride = 1;
    Buffer input_as = Buffer::input;
    for (const SuaraStep& step : grid.steps) {
      if (step.size > 1) {
        append_step(b, step, stride, input_as, count, elem_bytes);
        input_as = Buffer::output;
      }
      stride *= step.size;
    }
  }
  b.copy_unwritten_output();  // P = 1: output = input
  return std::move(b).finish();
}

Schedule allreduce_suara(int ranks, std::size_t count, std::size_t elem_bytes, const std::vector<int>& keep) {
  return allreduce_suara_on(count > 0 ? suara_grid(ranks, count, elem_bytes) : SuaraGrid{}, ranks, count, elem_bytes,
                            keep);
}

PlanBounds allreduce_suara_bounds(int ranks, std::size_t count, std::size_t elem_bytes) {
  PlanBounds sum;
  if (count == 0) return sum;
  for (const SuaraStep& step : suara_grid(ranks, count, elem_bytes).steps) {
    if (step.size == 1) continue;
    const PlanBounds one = detail::group_bounds(step.algorithm, step.size, count, elem_bytes);
    sum.scratch_elems += one.scratch_elems;
    sum.flags += one.flags;
  }
  return sum;
}

}  // namespace earlybird::coll
