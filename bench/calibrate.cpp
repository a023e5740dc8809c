// eb-bench calibrate: measures the cost model's parameters for the level
// this job runs on and writes a profile file the runtime reads from
// EARLYBIRD_PROFILE (collectives/predict.hpp), then checks the model: every
// validated algorithm measured against its prediction, same run.
//
// How (docs/algorithms.md, "The cost model"):
// - gamma and copy: a local pass over 8 MiB (b += a; memcpy), the fastest of
//   several, on every rank; the slowest rank's rate counts;
// - per_call, alpha, per_step: 8-byte and 4 KiB allreduces of algorithms
//   with different round and step counts; each measured time is
//   per_call + a·alpha + s·per_step, a and s the simulator's time with that
//   parameter 1 and the others 0, after the bytes' cost at the current beta;
//   a least-squares fit of the relative error, parameters that would come
//   out negative held at 0;
// - beta: 64 KiB to 16 MiB allreduces (ring, Rabenseifner, recursive
//   doubling): the rest of each measured time against the simulator's time
//   with beta = 1, least squares of the relative error through 0 (one beta
//   for in-cache and out-of-cache sizes: the model has no caches);
// - the two fits alternate (kFitRounds), each using the other's result.
// Linear is left out of the latency fit: the model serialises its P - 1
// transfers into rank 0 on one port (P - 1 latencies), where on a node the
// senders store into the window at once (16 cores, P = 16, 8 B: ~4 us against
// a modelled 30 alpha); with it the fit held alpha at 0 and auto chose
// many-round algorithms at 512 B-4 KiB. The ring's 2(P - 1) dependent rounds
// pin alpha down.
// Every call's result is checked against the MPI library's; a wrong one fails
// the job (exit 2) and writes no profile.
#include <mpi.h>

#include <earlybird/collectives/predict.hpp>
#include <earlybird/machine_probe.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <vector>

#include "bench_common.hpp"
#include "collective_table.hpp"
#include "contenders.hpp"
#include "jobs.hpp"
#include "measure.hpp"

namespace earlybird::bench {
namespace {

constexpr std::size_t kElemBytes = sizeof(float);
constexpr std::array<const char*, 4> kLatencyAlgorithms{"recursive_doubling", "rabenseifner", "binomial", "ring"};
constexpr std::array<std::size_t, 2> kLatencyBytes{8, 4096};
constexpr std::array<const char*, 3> kBandwidthAlgorithms{"ring", "rabenseifner", "recursive_doubling"};
constexpr std::array<std::size_t, 4> kBandwidthBytes{64u << 10, 1u << 20, 4u << 20, 16u << 20};
// The latency fit subtracts the bytes' cost at the current beta and the beta
// fit the latency terms: alternating settles both (the first latency fit
// sees the profile's beta, default or EARLYBIRD_PROFILE's).
constexpr int kFitRounds = 3;

// gamma and copy: every rank at once over 8 MiB (past the caches), the
// slowest rank's best of 7.
void measure_local_rates(coll::CostModel& model) {
  const MemoryRates rates = measure_memory_rates(MPI_COMM_WORLD, 8u << 20, 7);
  model.gamma = rates.reduce_s_per_byte;
  model.copy_per_byte = rates.copy_s_per_byte;
}

// One measured allreduce: its median time and what the simulator says it is
// made of.
struct Sample {
  const char* algorithm;
  std::size_t bytes;
  double measured;
};

// Medians of `algorithms` at `bytes` (MPI's default first, as the reference).
std::vector<Sample> measure(Communicator& comm, const std::vector<const char*>& algorithms, std::size_t bytes,
                            double budget, Totals& totals) {
  const CollectiveSpec& spec = collective_spec("allreduce");
  std::vector<Contender> contenders{mpi_contender(spec, "mpi:default", MPI_COMM_WORLD)};
  for (const char* name : algorithms) contenders.push_back(earlybird_contender(spec, name, comm, {}));
  const SizeResult r = measure_size(spec, contenders, bytes / kElemBytes, budget, comm.rank(), comm.size());
  std::vector<Sample> samples;
  for (std::size_t i = 1; i < contenders.size(); ++i) {
    totals.wrong += r.outcomes[i].wrong;
    if (!r.outcomes[i].timed()) {
      ++totals.earlybird_failures;
      if (comm.rank() == 0) std::printf("# %s at %zu B failed: %s\n", algorithms[i - 1], bytes, r.outcomes[i].error.c_str());
      continue;
    }
    samples.push_back({algorithms[i - 1], bytes, r.outcomes[i].stats.median});
  }
  return samples;
}

template <std::size_t N>
std::vector<Sample> measure_all(Communicator& comm, const std::vector<const char*>& algorithms,
                                const std::array<std::size_t, N>& sizes, const CalibrateOptions& o, Totals& totals) {
  std::vector<Sample> all;
  for (std::size_t bytes : sizes)
    for (const Sample& s : measure(comm, algorithms, bytes, o.budget_s, totals)) all.push_back(s);
  return all;
}

double simulated(const Sample& s, int ranks, const coll::CostModel& model) {
  const coll::Algorithm* a = coll::find_algorithm(coll::Collective::allreduce, s.algorithm);
  return coll::predict(*a, ranks, s.bytes / kElemBytes, kElemBytes, coll::LevelCosts{model, 0});
}

// Solves the normal equations of min |A x - y| over the columns `used`
// (Gaussian elimination; at most 3 unknowns); the others are 0.
std::vector<double> least_squares(const std::vector<std::array<double, 3>>& rows, const std::vector<double>& y,
                                  const std::array<bool, 3>& used) {
  std::vector<int> cols;
  for (int c = 0; c < 3; ++c)
    if (used[c]) cols.push_back(c);
  const std::size_t k = cols.size();
  std::vector<std::vector<double>> m(k, std::vector<double>(k + 1, 0));
  for (std::size_t r = 0; r < rows.size(); ++r)
    for (std::size_t i = 0; i < k; ++i) {
      for (std::size_t j = 0; j < k; ++j) m[i][j] += rows[r][cols[i]] * rows[r][cols[j]];
      m[i][k] += rows[r][cols[i]] * y[r];
    }
  for (std::size_t p = 0; p < k; ++p) {
    std::size_t pivot = p;
    for (std::size_t i = p + 1; i < k; ++i)
      if (std::abs(m[i][p]) > std::abs(m[pivot][p])) pivot = i;
    std::swap(m[p], m[pivot]);
    if (std::abs(m[p][p]) < 1e-30) return {};  // collinear columns
    for (std::size_t i = 0; i < k; ++i)
      if (i != p) {
        const double f = m[i][p] / m[p][p];
        for (std::size_t j = p; j <= k; ++j) m[i][j] -= f * m[p][j];
      }
  }
  std::vector<double> x(3, 0);
  for (std::size_t i = 0; i < k; ++i) x[cols[i]] = m[i][k] / m[i][i];
  return x;
}

// per_call, alpha, per_step from small calls: the non-negative fit with the
// least residual over every subset of the three parameters.
void fit_latency(const std::vector<Sample>& samples, int ranks, coll::LevelCosts& costs) {
  std::vector<std::array<double, 3>> rows;
  std::vector<double> y;
  coll::CostModel bytes_only = costs.model;  // gamma, copy and the current beta
  bytes_only.alpha = bytes_only.per_step = 0;
  for (const Sample& s : samples) {  // every row divided by the measured time: relative errors
    rows.push_back({1.0 / s.measured, simulated(s, ranks, coll::CostModel{1, 0, 0, 0, 0}) / s.measured,
                    simulated(s, ranks, coll::CostModel{0, 0, 0, 0, 1}) / s.measured});
    y.push_back(1.0 - simulated(s, ranks, bytes_only) / s.measured);
  }
  double best_residual = 1e300;
  for (int mask = 1; mask < 8; ++mask) {
    const std::array<bool, 3> used{(mask & 1) != 0, (mask & 2) != 0, (mask & 4) != 0};
    const std::vector<double> x = least_squares(rows, y, used);
    if (x.empty() || *std::min_element(x.begin(), x.end()) < 0) continue;
    double residual = 0;
    for (std::size_t r = 0; r < rows.size(); ++r) {
      const double e = x[0] * rows[r][0] + x[1] * rows[r][1] + x[2] * rows[r][2] - y[r];
      residual += e * e;
    }
    if (residual < best_residual) {
      best_residual = residual;
      costs.per_call = x[0];
      costs.model.alpha = x[1];
      costs.model.per_step = x[2];
    }
  }
}

void fit_beta(const std::vector<Sample>& samples, int ranks, coll::LevelCosts& costs) {
  coll::CostModel without_beta = costs.model;
  without_beta.beta = 0;
  double num = 0, den = 0;
  for (const Sample& s : samples) {
    const double rest = s.measured - costs.per_call - simulated(s, ranks, without_beta);
    const double per_beta = simulated(s, ranks, coll::CostModel{0, 1, 0, 0, 0});
    const double weight = 1 / (s.measured * s.measured);
    num += weight * per_beta * rest;
    den += weight * per_beta * per_beta;
  }
  costs.model.beta = den > 0 ? std::max(0.0, num / den) : 0;
}

// Measured against predicted for the validated algorithms; how many within 25 %.
void validate(Communicator& comm, const CalibrateOptions& o, const coll::LevelCosts& costs, Totals& totals) {
  const int rank = comm.rank();
  if (rank == 0)
    std::printf("\n# validation: measured median vs the model's prediction (same run); ratio = predicted / measured\n"
                "%10s  %-20s %12s %12s %7s\n",
                "bytes", "algorithm", "measured us", "predicted us", "ratio");
  int within = 0, total = 0;
  for (std::size_t bytes : o.validate_sizes) {
    std::vector<const char*> names;
    for (const std::string& a : o.validate_algorithms) names.push_back(a.c_str());
    for (const Sample& s : measure(comm, names, bytes, o.budget_s, totals)) {
      const coll::Algorithm* a = coll::find_algorithm(coll::Collective::allreduce, s.algorithm);
      const double predicted = coll::predict(*a, comm.size(), bytes / kElemBytes, kElemBytes, costs);
      const double ratio = predicted / s.measured;
      ++total;
      if (ratio >= 0.75 && ratio <= 1.25) ++within;
      if (rank == 0)
        std::printf("%10zu  %-20s %12.1f %12.1f %7.2f\n", bytes, s.algorithm, s.measured * 1e6, predicted * 1e6, ratio);
    }
  }
  if (rank == 0) std::printf("# %d of %d predictions within 25 %% of the measured time\n", within, total);
}

void write_profile(const CalibrateOptions& o, const coll::MachineProfile& profile, const std::string& level,
                   int ranks) {
  std::ofstream out(o.output);
  if (!out) throw std::runtime_error("calibrate: cannot write " + o.output);
  out << "# earlybird cost profile: the " << level << " level measured by eb-bench calibrate at P = " << ranks
      << ";\n# the other level: " << (profile.source == "defaults" ? "defaults" : "from " + profile.source)
      << ". Units: seconds, seconds per byte.\n"
      << coll::format_profile(profile);
}

}  // namespace

int run_calibrate(Communicator& comm, const CalibrateOptions& o) {
  const int rank = comm.rank(), ranks = comm.size();
  print_run_header("calibrate", o.command_line, MPI_COMM_WORLD);
  if (ranks < 2) throw std::invalid_argument("calibrate needs at least 2 ranks (nothing to measure between ranks)");
  const std::string level = !o.level.empty() ? o.level : on_one_node() ? "node" : "network";
  coll::MachineProfile profile = coll::default_profile();
  if (const char* path = std::getenv("EARLYBIRD_PROFILE"); path && *path) profile = coll::read_profile(path);
  coll::LevelCosts& costs = level == "node" ? profile.node : profile.network;
  Totals totals;
  measure_local_rates(costs.model);
  const std::vector<Sample> small =
      measure_all(comm, {kLatencyAlgorithms.begin(), kLatencyAlgorithms.end()}, kLatencyBytes, o, totals);
  const std::vector<Sample> large =
      measure_all(comm, {kBandwidthAlgorithms.begin(), kBandwidthAlgorithms.end()}, kBandwidthBytes, o, totals);
  for (int round = 0; round < kFitRounds; ++round) {
    fit_latency(small, ranks, costs);
    fit_beta(large, ranks, costs);
  }
  if (rank == 0)
    std::printf("# %s level, P = %d: alpha %.3g s, beta %.3g s/B, gamma %.3g s/B, copy %.3g s/B, per_step %.3g s, "
                "per_call %.3g s\n",
                level.c_str(), ranks, costs.model.alpha, costs.model.beta, costs.model.gamma, costs.model.copy_cost(),
                costs.model.per_step, costs.per_call);
  if (totals.exit_code() == 0 && rank == 0 && !o.output.empty()) {
    write_profile(o, profile, level, ranks);
    std::printf("# written to %s (EARLYBIRD_PROFILE=%s)\n", o.output.c_str(), o.output.c_str());
  }
  if (!o.validate_sizes.empty() && o.validate_algorithms != std::vector<std::string>{"none"})
    validate(comm, o, costs, totals);
  return totals.exit_code();
}

}  // namespace earlybird::bench
