// Verifies every allreduce algorithm of the catalogue symbolically for P = 1..64 and large P, many counts and seeds.
#include <earlybird/collectives/allreduce.hpp>
#include <earlybird/collectives/partition.hpp>
#include <earlybird/collectives/predict.hpp>
#include <earlybird/collectives/simulate.hpp>
#include <earlybird/collectives/verify.hpp>

#include "unit_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

using namespace earlybird::coll;
using earlybird::coll::test::for_each_node_layout;
using earlybird::coll::test::swept_ranks;

namespace {

constexpr std::size_t kElemBytes = 4;

void check_verified(const Schedule& s, std::uint64_t seeds) {
  for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
    const VerifyReport report = verify_allreduce(s, {seed});
    CHECK_MESSAGE(report.ok, report.error);
    CHECK(report.steps_run == s.steps().size());
  }
}

// A segment of about a third of a chunk: several segments per chunk.
std::size_t third_of_chunk(std::size_t count, int p) {
  return std::max<std::size_t>(1, max_chunk(count, p) / 3);
}

}  // namespace

TEST_CASE("every catalogue algorithm, P = 1..64, counts {0, 1, P-1, P, P+1, 1000, 10007}, 3 seeds") {
  for (const Algorithm& algorithm : allreduce_algorithms()) {
    for (int p : swept_ranks()) {
      for (std::size_t count : test::vector_counts(p)) {
        CAPTURE(algorithm.name);
        CAPTURE(p);
        CAPTURE(count);
        check_verified(algorithm.make(p, count, {}, kElemBytes), 3);
      }
    }
  }
}

TEST_CASE("segmented ring with several segments per chunk, P = 1..64") {
  for (int p : swept_ranks()) {
    for (std::size_t count : {static_cast<std::size_t>(3 * p + 1), std::size_t{1000}, std::size_t{10007}}) {
      const std::size_t segment = third_of_chunk(count, p);
      CAPTURE(p);
      CAPTURE(count);
      CAPTURE(segment);
      check_verified(allreduce_segmented_ring(p, count, segment), 3);
    }
  }
}

TEST_CASE("large P: every catalogue algorithm for P in {100, 127, 128}, counts {0, 1, P+1}") {
  for (const Algorithm& algorithm : allreduce_algorithms()) {
    for (int p : {100, 127, 128}) {
      for (std::size_t count : {std::size_t{0}, std::size_t{1}, static_cast<std::size_t>(p) + 1}) {
        CAPTURE(algorithm.name);
        CAPTURE(p);
        CAPTURE(count);
        check_verified(algorithm.make(p, count, {}, kElemBytes), 1);
      }
    }
  }
}

TEST_CASE("large P: segmented ring with several segments per chunk, P in {100, 127, 128}") {
  for (int p : {100, 127, 128}) {
    const std::size_t count = 10 * static_cast<std::size_t>(p) + 3;
    CAPTURE(p);
    check_verified(allreduce_segmented_ring(p, count, 3), 1);
  }
}

// Building a ring schedule for P = 1024 (4 million steps) takes most of this
// file's time, so at P >= 1000 the segmented ring is left out: with count P+1
// and its default segment it has one segment per chunk, the ring's schedule.
TEST_CASE("large P: ring and recursive doubling for P in {1000, 1024}, counts {0, 1, P+1}") {
  for (int p : {1000, 1024}) {
    for (std::size_t count : {std::size_t{0}, std::size_t{1}, static_cast<std::size_t>(p) + 1}) {
      CAPTURE(p);
      CAPTURE(count);
      check_verified(allreduce_recursive_doubling(p, count), 1);
      check_verified(allreduce_ring(p, count), 1);
    }
  }
}

// The catalogue runs above pass no layout (one node: the ring); here every
// n dividing P, so 1 <= n <= P ranks per node, P / n nodes.
TEST_CASE("hierarchical for every node layout that divides P, P = 1..36") {
  for (int p = 1; p <= 36; ++p) {
    for (int n = 1; n <= p; ++n) {
      if (p % n != 0) continue;
      for (std::size_t count : test::vector_counts(p)) {
        CAPTURE(p);
        CAPTURE(n);
        CAPTURE(count);
        check_verified(allreduce_hierarchical(p, count, n, 0, kElemBytes), 2);
      }
    }
  }
}

TEST_CASE("hierarchical: the network step carries 1/n of the vector from each rank") {
  // P = 8 as 2 nodes of 4: every rank sends (n-1)/n m in each node phase
  // and its chunk across; with a vector of 4000 elements the network step
  // moves 1000 elements per rank, each way once in a 2-rank exchange.
  const Schedule s = allreduce_hierarchical(8, 4000, 4, 0, kElemBytes);
  std::size_t across = 0;
  for (const Step& step : s.steps())
    if (step.is_transfer() && step.owner / 4 != step.peer() / 4) across += step.src.range.count;
  CHECK(across == 8 * 1000);
  CHECK_THROWS_AS(allreduce_hierarchical(6, 10, 4, 0, kElemBytes), std::invalid_argument);
}

namespace {

// Every step `step` depends on, directly or not.
std::vector<bool> ancestors(const Schedule& s, StepId step) {
  std::vector<bool> seen(s.steps().size(), false);
  std::vector<StepId> todo{step};
  while (!todo.empty()) {
    const StepId g = todo.back();
    todo.pop_back();
    for (StepId d : s.deps(g))
      if (!seen[d]) {
        seen[d] = true;
        todo.push_back(d);
      }
  }
  return seen;
}

}  // namespace

TEST_CASE("hierarchical: pipelined by segment, verified over every node layout") {
  for_each_node_layout(*find_allreduce("hierarchical"), [](const Schedule& s, int, int, std::size_t) {
    check_verified(s, 1);
  });
  // One node (the ring) and one rank per node (the network algorithm) have
  // no node phase to overlap: segments change nothing there.
  for (int n : {0, 6, 1}) {
    CAPTURE(n);
    const Schedule whole = allreduce_hierarchical(6, 600, n, 0, kElemBytes);
    const Schedule cut = allreduce_hierarchical(6, 600, n, 7, kElemBytes);
    CHECK(cut.steps().size() == whole.steps().size());
  }
  // 2 nodes of 2, chunks of 14 elements in segments of 7: the first exchange
  // across the nodes waits for its own segment's node reduction only, not
  // for the other segment of its chunk (unsegmented it waits for both).
  for (std::size_t segment : {std::size_t{0}, std::size_t{7}}) {
    CAPTURE(segment);
    const Schedule s = allreduce_hierarchical(4, 28, 2, segment, kElemBytes);
    const auto steps = s.steps();
    StepId first_crossing = 0;
    while (!(steps[first_crossing].is_transfer() && steps[first_crossing].owner / 2 != steps[first_crossing].peer() / 2))
      ++first_crossing;
    const int owner = steps[first_crossing].owner;
    const std::vector<bool> before = ancestors(s, first_crossing);
    int node_reductions = 0, waited = 0;
    for (StepId g = 0; g < first_crossing; ++g)
      if (steps[g].kind == StepKind::reduce && steps[g].owner == owner) {
        ++node_reductions;
        if (before[g]) ++waited;
      }
    CHECK(node_reductions == (segment == 0 ? 1 : 2));
    CHECK(waited == 1);
  }
}

// SUARA with L = 2, 3 and 4 steps on given grids (the model picks L = 1 or 2
// at these sizes, so the catalogue runs above do not reach L >= 3), mixed
// algorithms per step, non-power-of-two factors.
TEST_CASE("suara on given grids of 2, 3 and 4 steps") {
  const std::vector<SuaraGrid> grids = {
      {{{2, "ring"}, {3, "rabenseifner"}}, 0},
      {{{2, "recursive_doubling"}, {2, "ring"}, {2, "binomial"}}, 0},
      {{{3, "segmented_ring"}, {2, "recursive_doubling"}, {2, "rabenseifner"}}, 0},
      {{{2, "ring"}, {3, "binomial"}, {5, "recursive_doubling"}}, 0},
      {{{2, "rabenseifner"}, {2, "ring"}, {2, "segmented_ring"}, {2, "recursive_doubling"}}, 0},
  };
  for (const SuaraGrid& grid : grids) {
    int p = 1;
    for (const SuaraStep& step : grid.steps) p *= step.size;
    for (std::size_t count : test::vector_counts(p)) {
      CAPTURE(p);
      CAPTURE(grid.steps.size());
      CAPTURE(count);
      check_verified(allreduce_suara_on(grid, p, count, kElemBytes), 2);
    }
  }
}

TEST_CASE("suara_grid: steps multiply to P, the prediction is their sum, never above the flat algorithm's") {
  for (int p : swept_ranks()) {
    for (std::size_t count : {std::size_t{2}, std::size_t{16384}, std::size_t{4} << 20}) {
      CAPTURE(p);
      CAPTURE(count);
      const SuaraGrid grid = suara_grid(p, count, kElemBytes);
      int product = 1;
      double sum = 0;
      for (const SuaraStep& step : grid.steps) {
        REQUIRE(find_allreduce(step.algorithm) != nullptr);
        CHECK(step.size > 1);
        product *= step.size;
        sum += simulate(find_allreduce(step.algorithm)->make(step.size, count, {}, kElemBytes), kElemBytes,
                        kSuaraMachine).time;
      }
      CHECK(product == p);
      CHECK(grid.predicted_s == doctest::Approx(sum).epsilon(1e-12));
      if (p == 1) continue;
      // One step of all P ranks is among the grids searched, and a grid of
      // more steps is taken only when it predicts clearly less.
      double flat = std::numeric_limits<double>::max();
      for (std::string_view name : kSuaraCandidates)
        flat = std::min(flat, simulate(find_allreduce(name)->make(p, count, {}, kElemBytes), kElemBytes,
                                       kSuaraMachine).time);
      CHECK(grid.predicted_s <= flat * (1 + 1e-12));
      if (grid.steps.size() > 1) CHECK(grid.predicted_s < flat * (1 - 1e-9));
    }
  }
}

TEST_CASE("suara_grid leaves the ring family and the binomial out of steps above kSuaraLargestRingStep ranks, and only there") {
  auto has = [](const std::vector<std::string_view>& names, std::string_view name) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  for (int p : {2, kSuaraLargestRingStep}) {
    CAPTURE(p);
    CHECK(suara_step_candidates(p).size() == kSuaraCandidates.size());
  }
  const std::vector<std::string_view> large = suara_step_candidates(kSuaraLargestRingStep + 1);
  CHECK_FALSE(has(large, "ring"));
  CHECK_FALSE(has(large, "segmented_ring"));
  CHECK_FALSE(has(large, "binomial"));
  CHECK(large.size() == kSuaraCandidates.size() - 3);
  // A grid over 2048 ranks: no step above the limit runs a ring.
  const SuaraGrid grid = suara_grid(2048, 2, kElemBytes);
  for (const SuaraStep& step : grid.steps)
    if (step.size > kSuaraLargestRingStep) CHECK(has(large, step.algorithm));
}

// Why large steps may leave the binomial out: under one-level models (seed
// 003's machine, which suara_grid chooses under, and the default profile's
// levels) it never predicts less than recursive doubling where every fold
// costs gamma. (With the node level's dearer folds into a third buffer,
// gamma_apart, recursive doubling's fold of an extra rank at P = 7 and
// 256 KiB costs it more than the binomial's folds in place.)
TEST_CASE("the binomial never predicts less than recursive doubling under a one-level model") {
  const MachineProfile profile = default_profile();
  CostModel node = profile.node.model;
  node.gamma_apart = -1;
  for (const CostModel& model : {kSuaraMachine, profile.network.model, node})
    for (int p = 2; p <= 96; ++p)
      for (std::size_t count : {std::size_t{1}, std::size_t{7}, std::size_t{1000}, std::size_t{65536}}) {
        CAPTURE(p);
        CAPTURE(count);
        const double binomial = simulate(allreduce_binomial(p, count), kElemBytes, model).time;
        const double butterfly = simulate(allreduce_recursive_doubling(p, count), kElemBytes, model).time;
        CHECK(binomial >= butterfly * (1 - 1e-12));
      }
}

TEST_CASE("suara on a grid that does not multiply to P, or names no catalogue allreduce, is refused") {
  CHECK_THROWS_AS(allreduce_suara_on({{{2, "ring"}, {2, "ring"}}, 0}, 6, 10, kElemBytes), std::invalid_argument);
  CHECK_THROWS_AS(allreduce_suara_on({{{2, "no_such"}, {3, "ring"}}, 0}, 6, 10, kElemBytes), std::invalid_argument);
}
