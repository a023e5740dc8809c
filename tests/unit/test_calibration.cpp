// The calibration fit (collectives/src/schedule/calibration.cpp): given
// times the model itself predicts for known costs, fit_level recovers those
// costs, from a starting beta far from the truth, at one and several P; a
// time the model cannot explain is not absorbed as a negative parameter.
#include <doctest/doctest.h>

#include <earlybird/collectives/calibration.hpp>
#include <earlybird/collectives/predict.hpp>

#include <cstddef>
#include <string>
#include <vector>
#include "../common/approx.hpp"

using namespace earlybird::coll;
using earlybird::testing::relative;

namespace {

// The calls eb-bench calibrate measures.
const std::vector<std::string> kLatencyAlgorithms{"recursive_doubling", "rabenseifner", "binomial", "ring"};
const std::vector<std::size_t> kLatencyBytes{8, 4096};
const std::vector<std::string> kBandwidthAlgorithms{"ring", "rabenseifner", "recursive_doubling"};
const std::vector<std::size_t> kBandwidthBytes{64u << 10, 1u << 20, 4u << 20, 16u << 20};

std::vector<TimedAllreduce> timed_by_model(const std::vector<std::string>& algorithms,
                                           const std::vector<std::size_t>& sizes, int ranks,
                                           const LevelCosts& truth) {
  std::vector<TimedAllreduce> calls;
  for (std::size_t bytes : sizes)
    for (const std::string& name : algorithms) {
      const Algorithm* a = find_algorithm(Collective::allreduce, name);
      REQUIRE(a);
      calls.push_back({name, bytes, predict(*a, ranks, bytes / 4, 4, truth)});
    }
  return calls;
}

// A node-like level: latency and bytes both matter at 4 KiB.
LevelCosts truth() { return LevelCosts{CostModel{3e-7, 1.5e-10, 6e-11, 4e-11, 8e-8}, 1.7e-6}; }

// What calibrate starts from: gamma and copy measured, the rest a guess.
LevelCosts start_from(const LevelCosts& truth, double beta) {
  LevelCosts start{CostModel{0, beta, truth.model.gamma, truth.model.copy_per_byte, 0}, 0};
  return start;
}

}  // namespace

TEST_CASE("fit_level recovers the costs that generated the times") {
  for (int ranks : {2, 4, 16}) {
    for (double start_beta : {0.0, 1e-9, 1.5e-10}) {
      CAPTURE(ranks);
      CAPTURE(start_beta);
      const LevelCosts t = truth();
      LevelCosts fitted = start_from(t, start_beta);
      fit_level(timed_by_model(kLatencyAlgorithms, kLatencyBytes, ranks, t),
                timed_by_model(kBandwidthAlgorithms, kBandwidthBytes, ranks, t), ranks, fitted);
      CHECK(fitted.model.beta == relative(t.model.beta, 0.01));
      CHECK(fitted.per_call == relative(t.per_call, 0.01));
      // At P = 2 every fitted call has one step per transfer or two: alpha
      // and per_step are not told apart, only their sum per round is.
      if (ranks > 2) {
        CHECK(fitted.model.alpha == relative(t.model.alpha, 0.01));
        CHECK(fitted.model.per_step == relative(t.model.per_step, 0.01));
      }
      for (const char* name : {"recursive_doubling", "ring", "rabenseifner"})
        for (std::size_t count : {std::size_t{2}, std::size_t{1024}, std::size_t{1} << 18}) {
          CAPTURE(name);
          CAPTURE(count);
          const Algorithm* a = find_algorithm(Collective::allreduce, name);
          CHECK(predict(*a, ranks, count, 4, fitted) == relative(predict(*a, ranks, count, 4, t), 0.01));
        }
      CHECK(fitted.model.gamma == t.model.gamma);  // measured apart: kept
    }
  }
}

TEST_CASE("fit_level holds parameters the times cannot support at 0, never below") {
  const int ranks = 8;
  const LevelCosts t = truth();
  std::vector<TimedAllreduce> small = timed_by_model(kLatencyAlgorithms, kLatencyBytes, ranks, t);
  // Many-round algorithms measured as fast as one-round ones: no positive
  // alpha explains that; the fit must not go negative to absorb it.
  for (TimedAllreduce& call : small) call.seconds = 2e-6;
  LevelCosts fitted = start_from(t, t.model.beta);
  fit_level(small, timed_by_model(kBandwidthAlgorithms, kBandwidthBytes, ranks, t), ranks, fitted);
  CHECK(fitted.model.alpha >= 0);
  CHECK(fitted.model.per_step >= 0);
  CHECK(fitted.per_call >= 0);
  CHECK(fitted.model.beta >= 0);
}

TEST_CASE("fit_level names an algorithm it does not know") {
  LevelCosts costs = truth();
  CHECK_THROWS_WITH(fit_level({{"no_such_algorithm", 8, 1e-6}}, {}, 2, costs),
                    doctest::Contains("no_such_algorithm"));
}
