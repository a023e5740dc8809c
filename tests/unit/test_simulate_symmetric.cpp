// simulate_symmetric (collectives/src/schedule/simulate_symmetric.cpp): one
// rank's plan stands for every rank. Where the schedule is rank-symmetric
// it predicts exactly what simulate() predicts for the whole schedule; an
// asymmetric plan (a flag number the rank never raises) is refused. SUARA's
// grid choice predicts its steps this way where it is exact.
#include <doctest/doctest.h>

#include "allreduce/group_steps.hpp"

#include <earlybird/collectives/allreduce.hpp>
#include <earlybird/collectives/plan.hpp>
#include <earlybird/collectives/simulate.hpp>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

using namespace earlybird::coll;

namespace {

constexpr std::size_t kElemBytes = 4;

// alpha, beta, gamma, copy, per_step: all terms non-zero, so a missed
// dependency or resource shows in the sum.
const CostModel kModel{2e-6, 1e-9, 3e-10, 2e-10, 5e-7};

// kModel with the transfers as copies on the sender's CPU (shared memory).
CostModel transfers_on_cpu() {
  CostModel model = kModel;
  model.transfers_on_cpu = true;
  return model;
}

double whole(const Algorithm& a, int p, std::size_t count, const AlgorithmParams& params,
             const CostModel& model = kModel) {
  return simulate(a.make(p, count, params, kElemBytes), kElemBytes, model).time;
}

double one_rank(const Algorithm& a, int p, std::size_t count, const AlgorithmParams& params, int rank = 0,
                const CostModel& model = kModel) {
  return simulate_symmetric(plan_for_rank(a, p, count, params, kElemBytes, rank), kElemBytes, model).time;
}

const Algorithm& allreduce(const char* name) {
  const Algorithm* a = find_algorithm(Collective::allreduce, name);
  REQUIRE(a != nullptr);
  return *a;
}

}  // namespace

TEST_CASE("the ring family: one rank's plan predicts the whole schedule's time when P divides the count") {
  for (const char* name : {"ring", "segmented_ring"})
    for (int p = 1; p <= 12; ++p)
      for (std::size_t per_rank : {std::size_t{1}, std::size_t{5}, std::size_t{64}})
        for (std::size_t segment : {std::size_t{0}, std::size_t{2}}) {
          CAPTURE(name);
          CAPTURE(p);
          CAPTURE(per_rank);
          CAPTURE(segment);
          AlgorithmParams params;
          params.segment_elems = segment;
          const std::size_t count = per_rank * static_cast<std::size_t>(p);
          for (const CostModel& model : {kModel, transfers_on_cpu()}) {
            CAPTURE(model.transfers_on_cpu);
            const double expected = whole(allreduce(name), p, count, params, model);
            CHECK(one_rank(allreduce(name), p, count, params, 0, model) == doctest::Approx(expected).epsilon(1e-12));
            CHECK(one_rank(allreduce(name), p, count, params, p - 1, model) ==
                  doctest::Approx(expected).epsilon(1e-12));
          }
        }
}

TEST_CASE("recursive doubling and Rabenseifner at powers of two") {
  for (const char* name : {"recursive_doubling", "rabenseifner"})
    for (int p : {2, 4, 8, 16, 32, 64})
      for (std::size_t count : {std::size_t{64}, std::size_t{4096}}) {
        CAPTURE(name);
        CAPTURE(p);
        CAPTURE(count);
        for (const CostModel& model : {kModel, transfers_on_cpu()}) {
          CAPTURE(model.transfers_on_cpu);
          CHECK(one_rank(allreduce(name), p, count, {}, 0, model) ==
                doctest::Approx(whole(allreduce(name), p, count, {}, model)).epsilon(1e-12));
        }
      }
}

TEST_CASE("large P: the ring at P = 4096 from one rank's plan, against the cost formula") {
  // 2(P-1) rounds of a chunk's transfer, P-1 reductions and P-1 copies, each
  // step also per_step: the ring's chain has nothing to overlap.
  const int p = 4096;
  const std::size_t chunk = 16;
  const double c = static_cast<double>(chunk * kElemBytes);
  const double expected = (p - 1) * (2 * (kModel.per_step + kModel.alpha + kModel.beta * c) +
                                     (kModel.per_step + kModel.gamma * c) + (kModel.per_step + kModel.copy_cost() * c));
  CHECK(one_rank(allreduce("ring"), p, chunk * p, {}) == doctest::Approx(expected).epsilon(1e-9));
}

TEST_CASE("a plan that is not rank-symmetric is refused, naming the algorithm and rank") {
  // One copy that waits for flag 0 from rank 1.
  RankPlan plan;
  plan.algorithm = "hand_made";
  plan.rank = 0;
  plan.ranks = 2;
  PlanStep copy;
  copy.src = copy.dst = {0, 4};
  copy.waits = 1;
  plan.steps = {copy};
  plan.flags = 1;
  plan.release_begin = {0, 1};
  plan.release = {0};
  plan.flag_source = {1};
  // It raises no flag 0 itself: nothing stands for rank 1's.
  CHECK_THROWS_WITH_AS(simulate_symmetric(plan, kElemBytes, kModel),
                       "simulate_symmetric: hand_made at P = 2, rank 0: it waits for flag 0 but raises none of that "
                       "number",
                       std::invalid_argument);
  // It raises flag 0 after it ran: it would wait for itself.
  plan.notes = {{1, 0}};
  plan.steps[0].note_end = 1;
  CHECK_THROWS_WITH_AS(simulate_symmetric(plan, kElemBytes, kModel),
                       "simulate_symmetric: hand_made at P = 2, rank 0: 1 of 1 steps wait on mirrored flags that wait "
                       "on them",
                       std::invalid_argument);
  CostModel two_levels = kModel;
  two_levels.node_ranks = 2;
  CHECK_THROWS_WITH_AS(simulate_symmetric(plan_for_rank(allreduce("ring"), 4, 8, {}, kElemBytes, 0), kElemBytes, two_levels),
                       "simulate_symmetric: allreduce_ring at P = 4, rank 0: two-level models are not supported",
                       std::invalid_argument);
}

TEST_CASE("SUARA's steps are predicted from one rank's plan only where that is exact") {
  CHECK(detail::predicted_from_one_rank("ring", 8, 64, kModel));
  CHECK(detail::predicted_from_one_rank("segmented_ring", 6, 12, kModel));
  CHECK(detail::predicted_from_one_rank("recursive_doubling", 16, 3, kModel));
  CHECK(detail::predicted_from_one_rank("rabenseifner", 16, 64, kModel));
  CHECK_FALSE(detail::predicted_from_one_rank("ring", 8, 63, kModel));
  CHECK_FALSE(detail::predicted_from_one_rank("recursive_doubling", 12, 48, kModel));
  CHECK_FALSE(detail::predicted_from_one_rank("rabenseifner", 16, 3, kModel));
  CHECK_FALSE(detail::predicted_from_one_rank("rabenseifner", 12, 48, kModel));
  CHECK_FALSE(detail::predicted_from_one_rank("binomial", 8, 64, kModel));
  CostModel two_levels = kModel;
  two_levels.node_ranks = 2;
  CHECK_FALSE(detail::predicted_from_one_rank("ring", 8, 64, two_levels));
  CostModel shared_cores = kModel;
  shared_cores.cores = 1;
  CHECK_FALSE(detail::predicted_from_one_rank("ring", 8, 64, shared_cores));

  // Whichever way a step is predicted, it is the whole schedule's simulation.
  for (std::string_view name : kSuaraCandidates)
    for (int p : {2, 3, 4, 5, 6, 8, 12, 16, 32, 64})
      for (std::size_t count : {std::size_t{1}, std::size_t(p) - 1, std::size_t(p), 3 * std::size_t(p) + 1,
                                64 * std::size_t(p)}) {
        if (count == 0) continue;
        CAPTURE(name);
        CAPTURE(p);
        CAPTURE(count);
        const Algorithm& a = *find_algorithm(Collective::allreduce, name);
        CHECK(detail::predicted_group_step(name, p, count, kElemBytes, kModel) ==
              doctest::Approx(whole(a, p, count, {})).epsilon(1e-12));
      }
  // Above kWholeSimulationRanks, counts P does not divide come from the
  // multiples of P around them: close to the whole schedule's simulation.
  for (std::string_view name : {"ring", "segmented_ring", "rabenseifner"})
    for (int p : {300, 512}) {
      if (!detail::predicted_from_one_rank(name, p, static_cast<std::size_t>(p), kModel)) continue;
      for (std::size_t count : {std::size_t{2}, std::size_t(p) - 1, 3 * std::size_t(p) + 1, 15 * std::size_t(p) / 2}) {
        CAPTURE(name);
        CAPTURE(p);
        CAPTURE(count);
        const Algorithm& a = *find_algorithm(Collective::allreduce, name);
        const double epsilon = name == "rabenseifner" ? 0.12 : 1e-3;
        CHECK(detail::predicted_group_step(name, p, count, kElemBytes, kModel) ==
              doctest::Approx(whole(a, p, count, {})).epsilon(epsilon));
      }
    }
}
