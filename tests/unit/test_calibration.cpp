// The calibration fit (collectives/src/schedule/calibration.cpp): given
// times the model itself predicts for known costs, fit_level recovers those
// costs, from a starting beta far from the truth, at several P, with one
// regime or with a second past the caches; a time the model cannot explain
// is not absorbed as a negative parameter; where ranks outnumber cores,
// fit_wake recovers the switch.
#include <doctest/doctest.h>

#include <earlybird/collectives/calibration.hpp>
#include <earlybird/collectives/predict.hpp>

#include <cstddef>
#include <stdexcept>
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
LevelCosts one_regime() { return LevelCosts{CostModel{3e-7, 1.5e-10, 6e-11, 4e-11, 8e-8}, 1.7e-6}; }
const LocalRates kInCache{2e-11, 1.5e-11};
const LocalRates kInMemory{6e-11, 4e-11};  // one_regime()'s gamma and copy

// The same level with the caches: from 4 MiB (bytes x ranks) on, three
// times the in-cache beta and the memory rates.
LevelCosts two_regimes() {
  LevelCosts costs{CostModel{3e-7, 1e-10, kInCache.gamma, kInCache.copy, 8e-8}, 1.7e-6};
  costs.memory = {4.0 * (1 << 20), 3e-10, kInMemory.gamma, kInMemory.copy};
  return costs;
}

// What calibrate starts from: the rates measured, the rest a guess.
LevelCosts start_from(double beta) { return LevelCosts{CostModel{0, beta, 0, 0, 0}, 0}; }

LevelCosts fitted_to(const LevelCosts& truth, int ranks, double start_beta, const LocalRates& in_cache,
                     const LocalRates& in_memory) {
  LevelCosts fitted = start_from(start_beta);
  fitted.model.transfers_on_cpu = truth.model.transfers_on_cpu;  // the level's structure, not a fitted cost
  fit_level(timed_by_model(kLatencyAlgorithms, kLatencyBytes, ranks, truth),
            timed_by_model(kBandwidthAlgorithms, kBandwidthBytes, ranks, truth), ranks, in_cache, in_memory, fitted);
  return fitted;
}

// The fitted costs predict what the true ones do, for every algorithm the
// fit saw, in cache and past it.
void check_predictions(const LevelCosts& fitted, const LevelCosts& truth, int ranks) {
  for (const char* name : {"recursive_doubling", "ring", "rabenseifner"})
    for (std::size_t count : {std::size_t{2}, std::size_t{1024}, std::size_t{1} << 18, std::size_t{1} << 22}) {
      CAPTURE(name);
      CAPTURE(count);
      const Algorithm* a = find_algorithm(Collective::allreduce, name);
      CHECK(predict(*a, ranks, count, 4, fitted) == relative(predict(*a, ranks, count, 4, truth), 0.01));
    }
}

}  // namespace

TEST_CASE("fit_level recovers the costs that generated the times: one regime") {
  for (int ranks : {2, 4, 16}) {
    for (double start_beta : {0.0, 1e-9, 1.5e-10}) {
      CAPTURE(ranks);
      CAPTURE(start_beta);
      const LevelCosts t = one_regime();  // no caches: the rates measured in and past them agree
      const LevelCosts fitted = fitted_to(t, ranks, start_beta, kInMemory, kInMemory);
      CHECK(fitted.memory.from_bytes == 0);  // one beta explains every call
      CHECK(fitted.model.beta == relative(t.model.beta, 0.01));
      CHECK(fitted.model.gamma == t.model.gamma);  // the memory rates, as measured
      CHECK(fitted.per_call == relative(t.per_call, 0.01));
      // At P = 2 every fitted call has one step per transfer or two: alpha
      // and per_step are not told apart, only their sum per round is.
      if (ranks > 2) {
        CHECK(fitted.model.alpha == relative(t.model.alpha, 0.01));
        CHECK(fitted.model.per_step == relative(t.model.per_step, 0.01));
      }
      check_predictions(fitted, t, ranks);
    }
  }
}

TEST_CASE("fit_level recovers the costs that generated the times: a node (transfers on the CPU, reductions apart)") {
  // The local passes measured a reduction into a third buffer too.
  const LocalRates in_cache{kInCache.gamma, kInCache.copy, 4e-11};
  const LocalRates in_memory{kInMemory.gamma, kInMemory.copy, 9e-11};
  for (int ranks : {2, 4, 16}) {
    CAPTURE(ranks);
    LevelCosts t = two_regimes();
    t.model.transfers_on_cpu = true;  // a rank's copies and reductions take turns
    t.model.gamma_apart = in_cache.gamma_apart;
    t.memory.gamma_apart = in_memory.gamma_apart;
    const LevelCosts fitted = fitted_to(t, ranks, 0, in_cache, in_memory);
    CHECK(fitted.model.transfers_on_cpu);
    CHECK(fitted.model.gamma_apart == in_cache.gamma_apart);
    CHECK(fitted.memory.gamma_apart == in_memory.gamma_apart);
    CHECK(fitted.model.beta == relative(t.model.beta, 0.01));
    CHECK(fitted.memory.beta == relative(t.memory.beta, 0.01));
    CHECK(fitted.per_call == relative(t.per_call, 0.01));
    check_predictions(fitted, t, ranks);
  }
}

TEST_CASE("fit_level recovers the costs that generated the times: past the caches") {
  for (int ranks : {2, 4, 16}) {
    CAPTURE(ranks);
    const LevelCosts t = two_regimes();
    const LevelCosts fitted = fitted_to(t, ranks, 0, kInCache, kInMemory);
    REQUIRE(fitted.memory.from_bytes > 0);
    for (std::size_t bytes : kBandwidthBytes) {  // every measured size on the same side of the threshold
      CAPTURE(bytes);
      const double level_bytes = static_cast<double>(bytes) * ranks;
      CHECK((level_bytes >= fitted.memory.from_bytes) == (level_bytes >= t.memory.from_bytes));
    }
    CHECK(fitted.model.beta == relative(t.model.beta, 0.01));
    CHECK(fitted.memory.beta == relative(t.memory.beta, 0.01));
    CHECK(fitted.model.gamma == kInCache.gamma);
    CHECK(fitted.memory.gamma == kInMemory.gamma);
    CHECK(fitted.per_call == relative(t.per_call, 0.01));
    check_predictions(fitted, t, ranks);
  }
}

TEST_CASE("fit_level holds parameters the times cannot support at 0, never below") {
  const int ranks = 8;
  const LevelCosts t = one_regime();
  std::vector<TimedAllreduce> small = timed_by_model(kLatencyAlgorithms, kLatencyBytes, ranks, t);
  // Many-round algorithms measured as fast as one-round ones: no positive
  // alpha explains that; the fit must not go negative to absorb it.
  for (TimedAllreduce& call : small) call.seconds = 2e-6;
  LevelCosts fitted = start_from(t.model.beta);
  fit_level(small, timed_by_model(kBandwidthAlgorithms, kBandwidthBytes, ranks, t), ranks, kInCache, kInMemory,
            fitted);
  CHECK(fitted.model.alpha >= 0);
  CHECK(fitted.model.per_step >= 0);
  CHECK(fitted.per_call >= 0);
  CHECK(fitted.model.beta >= 0);
}

TEST_CASE("fit_level names an algorithm it does not know") {
  LevelCosts costs = one_regime();
  CHECK_THROWS_WITH(fit_level({{"no_such_algorithm", 8, 1e-6}}, {}, 2, kInCache, kInMemory, costs),
                    doctest::Contains("no_such_algorithm"));
}

TEST_CASE("fit_wake recovers the switch that generated the times where ranks outnumber cores") {
  for (double wake : {0.0, 2e-6, 5e-6, 3e-5}) {
    for (int ranks : {3, 4, 8}) {
      CAPTURE(wake);
      CAPTURE(ranks);
      LevelCosts truth = one_regime();
      truth.model.cores = 2;
      truth.wake = wake;
      std::vector<TimedAllreduce> calls = timed_by_model(kLatencyAlgorithms, kLatencyBytes, ranks, truth);
      const std::vector<TimedAllreduce> large = timed_by_model(kBandwidthAlgorithms, kBandwidthBytes, ranks, truth);
      calls.insert(calls.end(), large.begin(), large.end());
      LevelCosts fitted = one_regime();  // everything but the switch known
      fitted.wake = 1e-4;
      const double error = fit_wake(calls, ranks, 2, fitted);
      CHECK(fitted.model.cores == 2);
      // The error is piecewise in the wake (simulate.hpp: which CPU a step
      // takes changes with it): the scan lands within 2 % of the truth.
      CHECK(error < 0.03);
      CHECK(fitted.wake == doctest::Approx(wake).epsilon(0.02).scale(1e-6));
    }
  }
}

TEST_CASE("fit_peer_reads recovers the read costs that generated peer_reads times, the rest kept") {
  for (int ranks : {2, 4, 16}) {
    CAPTURE(ranks);
    LevelCosts truth{CostModel{2e-7, 1e-10, 4e-11, 3e-11, 5e-8}, 1e-6};
    truth.peer_read = 1.5e-10;
    truth.read_call = 2e-6;
    std::vector<TimedAllreduce> calls;
    for (std::size_t bytes : {std::size_t{4096}, std::size_t{64} << 10, std::size_t{1} << 20, std::size_t{16} << 20})
      calls.push_back({"peer_reads", bytes, predict_peer_reads(Collective::allreduce, ranks, bytes / 4, 4, truth)});
    LevelCosts fitted = truth;
    fitted.peer_read = fitted.read_call = 0;
    CHECK(fit_peer_reads(calls, ranks, fitted) < 1e-9);
    CHECK(fitted.peer_read == relative(truth.peer_read, 1e-6));
    CHECK(fitted.read_call == relative(truth.read_call, 1e-6));
    CHECK(fitted.model == truth.model);
    CHECK(fitted.per_call == truth.per_call);
  }
  // With a memory regime: the calls past the caches give the second rate.
  LevelCosts truth{CostModel{2e-7, 1e-10, 4e-11, 3e-11, 5e-8}, 1e-6};
  truth.memory = {4.0 * (1 << 20), 3e-10, 6e-11, 5e-11, 2.5e-10};
  truth.peer_read = 1e-10;
  truth.read_call = 2e-6;
  std::vector<TimedAllreduce> calls;
  for (std::size_t bytes : {std::size_t{4096}, std::size_t{64} << 10, std::size_t{1} << 20, std::size_t{4} << 20,
                            std::size_t{16} << 20})
    calls.push_back({"peer_reads", bytes, predict_peer_reads(Collective::allreduce, 2, bytes / 4, 4, truth)});
  LevelCosts fitted = truth;
  fitted.peer_read = fitted.memory.peer_read = fitted.read_call = 0;
  CHECK(fit_peer_reads(calls, 2, fitted) < 1e-9);
  CHECK(fitted.peer_read == relative(truth.peer_read));
  CHECK(fitted.memory.peer_read == relative(truth.memory.peer_read));
  CHECK(fitted.read_call == relative(truth.read_call));
  // Every call past the caches: their rate is the level's one rate.
  LevelCosts past = truth;
  past.peer_read = past.memory.peer_read = 0;
  fit_peer_reads({calls[3], calls[4]}, 2, past);
  CHECK(past.peer_read == relative(truth.memory.peer_read, 1e-3));
  CHECK(past.memory.peer_read == 0);
  // Times under what the waits and folds alone take: no negative cost.
  LevelCosts costs{CostModel{1e-5, 0, 1e-9, 1e-9, 0}, 1e-5};
  const std::vector<TimedAllreduce> fast{{"peer_reads", 4096, 1e-6}, {"peer_reads", 1u << 20, 1e-5}};
  fit_peer_reads(fast, 4, costs);
  CHECK(costs.peer_read >= 0);
  CHECK(costs.read_call >= 0);
}

TEST_CASE("fit_line_wait recovers the wait that generated peer_reads times over shared buffers, the rest kept") {
  for (int ranks : {2, 4, 16}) {
    CAPTURE(ranks);
    LevelCosts truth{CostModel{2e-7, 1e-10, 4e-11, 3e-11, 5e-8}, 1e-6};
    truth.model.gamma_apart = 5e-11;
    truth.line_wait = 2.5e-7;
    std::vector<TimedAllreduce> calls;
    for (std::size_t bytes : {std::size_t{8}, std::size_t{4096}})
      calls.push_back({"peer_reads", bytes, predict_peer_reads(Collective::allreduce, ranks, bytes / 4, 4, truth, true)});
    LevelCosts fitted = truth;
    fitted.line_wait = 0;
    CHECK(fit_line_wait(calls, ranks, fitted) < 1e-9);
    CHECK(fitted.line_wait == relative(truth.line_wait, 1e-6));
    CHECK(fitted.model == truth.model);
    CHECK(fitted.per_call == truth.per_call);
  }
  // Times under what per_call and the bytes alone take: no negative wait.
  LevelCosts costs{CostModel{1e-7, 0, 1e-10, 1e-10, 0}, 1e-5};
  costs.line_wait = 1;
  CHECK(fit_line_wait({{"peer_reads", 8, 1e-6}, {"peer_reads", 4096, 2e-6}}, 2, costs) > 0);
  CHECK(costs.line_wait == 0);
  // Nothing measured: 0, error 0.
  CHECK(fit_line_wait({}, 2, costs) == 0);
  CHECK(costs.line_wait == 0);
}

TEST_CASE("fit_inline_lines recovers the inline costs that generated inline_flags times, the rest kept") {
  for (int ranks : {2, 4, 16}) {
    CAPTURE(ranks);
    LevelCosts truth{CostModel{2e-7, 1e-10, 4e-11, 3e-11, 5e-8}, 1e-6};
    truth.inline_call = 3e-7;
    truth.inline_line = 3e-8;
    std::vector<TimedAllreduce> calls;
    for (std::size_t bytes : {std::size_t{8}, std::size_t{112}, std::size_t{280}, kInlineLinesBytes})
      calls.push_back({"inline_flags", bytes, predict_inline_lines(Collective::allreduce, ranks, bytes / 4, 4, truth)});
    LevelCosts fitted = truth;
    fitted.inline_call = fitted.inline_line = 0;
    CHECK(fit_inline_lines(calls, ranks, fitted) < 1e-9);
    CHECK(fitted.inline_call == relative(truth.inline_call, 1e-6));
    CHECK(fitted.inline_line == relative(truth.inline_line, 1e-6));
    CHECK(fitted.model == truth.model);
    CHECK(fitted.per_call == truth.per_call);
  }
  // Times that do not grow with the lines: the call alone, no negative line.
  LevelCosts costs{CostModel{1e-7, 0, 1e-10, 1e-10, 0}, 1e-6};
  fit_inline_lines({{"inline_flags", 8, 5e-7}, {"inline_flags", 448, 4e-7}}, 2, costs);
  CHECK(costs.inline_call > 0);
  CHECK(costs.inline_line == 0);
  // Nothing measured: nothing fitted, and auto leaves the lines out.
  CHECK(fit_inline_lines({}, 2, costs) == 0);
  CHECK(costs.inline_call == 0);
}

TEST_CASE("fit_board_cost recovers the board's ticket and decision that generated the arrival entries' times") {
  for (int ranks : {2, 4, 16}) {
    CAPTURE(ranks);
    LevelCosts truth = one_regime();
    truth.ticket = 4e-6;
    truth.decision = 3e-6;
    auto timed = [&](const char* name) {
      std::vector<TimedAllreduce> calls;
      for (std::size_t bytes : kLatencyBytes)
        calls.push_back({name, bytes,
                         predict_entry(Collective::allreduce, *find_algorithm(Collective::allreduce, name), ranks,
                                       bytes / 4, 4, truth)});
      return calls;
    };
    LevelCosts fitted = truth;
    fitted.ticket = fitted.decision = 1;  // what the profile started with does not count
    CHECK(fit_board_cost(timed("arrival_chain"), ranks, fitted, &LevelCosts::ticket) < 1e-9);
    CHECK(fitted.ticket == relative(truth.ticket, 1e-6));
    CHECK(fitted.decision == 1);  // a ticket-bound entry pays no decision
    CHECK(fit_board_cost(timed("pre_reduced_ring"), ranks, fitted, &LevelCosts::decision) < 1e-9);
    CHECK(fitted.decision == relative(truth.decision, 1e-6));
    CHECK(fitted.model == truth.model);
    CHECK(fitted.per_call == truth.per_call);
  }
  // Calls faster than their schedule: no negative cost.
  LevelCosts costs = one_regime();
  fit_board_cost({{"arrival_chain", 8, 1e-9}}, 2, costs, &LevelCosts::ticket);
  CHECK(costs.ticket == 0);
  CHECK(fit_board_cost({}, 2, costs, &LevelCosts::ticket) == 0);
  CHECK_THROWS_AS(fit_board_cost({{"no_such_algorithm", 8, 1e-6}}, 2, costs, &LevelCosts::ticket),
                  std::invalid_argument);
}
