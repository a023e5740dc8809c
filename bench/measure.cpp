#include "measure.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <numeric>
#include <random>
#include <thread>
#include <vector>

namespace earlybird::bench {
namespace {

// Seeds the order contenders are timed in within each round.
constexpr unsigned kOrderSeed = 20261126;

// Seconds per call of one sample (Sampling).
double timed_call(const Contender& contender, Buffers& buffers, Sampling sampling = {}) {
  if (sampling.idle_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(sampling.idle_us));
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (int c = 0; c < sampling.calls; ++c) contender.call(buffers);
  return (MPI_Wtime() - t0) / sampling.calls;
}

// The error message of one untimed call, or "" when it succeeded.
std::string try_call(const CollectiveSpec& spec, const Contender& contender, Buffers& buffers) {
  reset_output(spec, buffers);
  try {
    contender.call(buffers);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

// Makes every rank agree that a contender failed when any rank saw it fail.
std::string agreed_error(std::string local) {
  int failed = local.empty() ? 0 : 1;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (failed && local.empty()) local = "failed on another rank";
  return local;
}

// Two untimed rounds; the MPI default's result becomes the reference.
// Contenders that fail are marked and left out from then on.
void warm_up(const CollectiveSpec& spec, const std::vector<Contender>& contenders, Buffers& buffers,
             std::vector<Outcome>& outcomes) {
  for (int round = 0; round < 2; ++round)
    for (std::size_t i = 0; i < contenders.size(); ++i) {
      if (!outcomes[i].timed()) continue;
      outcomes[i].error = agreed_error(try_call(spec, contenders[i], buffers));
      if (i == 0) buffers.reference.assign(buffers.output.begin(), buffers.output.end());
    }
}

int iterations_for_round(const std::vector<Contender>& contenders, const std::vector<Outcome>& outcomes,
                         Buffers& buffers, double budget_per_contender) {
  double round = 0;
  int timed = 0;
  for (std::size_t i = 0; i < contenders.size(); ++i)
    if (outcomes[i].timed()) {
      round += timed_call(contenders[i], buffers);
      ++timed;
    }
  MPI_Allreduce(MPI_IN_PLACE, &round, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return iterations_for(round, budget_per_contender * timed, 5, 400);
}

// Per contender: iteration times, and 1.0 where the result was wrong.
struct Samples {
  std::vector<double> seconds, wrong;
};

}  // namespace

SizeResult measure_size(const CollectiveSpec& spec, const std::vector<Contender>& contenders, std::size_t count,
                        double budget, int rank, int ranks, Sampling sampling, CallForm form) {
  Buffers buffers = make_buffers(spec, rank, ranks, count, form);
  SizeResult result;
  result.bytes = count * sizeof(float);
  result.outcomes.resize(contenders.size());
  warm_up(spec, contenders, buffers, result.outcomes);
  result.iterations = iterations_for_round(contenders, result.outcomes, buffers, budget / sampling.calls);
  std::vector<Samples> samples(contenders.size());
  // Each round times the contenders in a fresh order (the same on every
  // rank: one seed, one generator), so none always follows an MPI call: the
  // earlybird call right after one pays for waking the idle progress thread.
  std::vector<std::size_t> order(contenders.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::mt19937 shuffler(kOrderSeed);
  for (int k = 0; k < result.iterations; ++k) {
    std::shuffle(order.begin(), order.end(), shuffler);
    for (std::size_t i : order) {
      if (!result.outcomes[i].timed()) continue;
      reset_output(spec, buffers);
      samples[i].seconds.push_back(timed_call(contenders[i], buffers, sampling));
      samples[i].wrong.push_back(output_matches(spec, buffers) ? 0.0 : 1.0);
    }
  }
  for (std::size_t i = 0; i < contenders.size(); ++i) {
    if (!result.outcomes[i].timed()) continue;
    result.outcomes[i].stats = stats_of(max_over_ranks(samples[i].seconds, MPI_COMM_WORLD));
    result.outcomes[i].wrong = wrong_iterations(samples[i].wrong);
  }
  return result;
}

}  // namespace earlybird::bench
