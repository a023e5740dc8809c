// eb-bench simulate: one catalogue algorithm's schedule run by the schedule
// simulator (collectives/simulate.hpp) under a Hockney model, with optional
// arrival times. No MPI: it runs without mpirun. Prints the predicted time,
// each rank's finish (summarised above 16 ranks), the critical path's make-up
// and its last steps; --csv writes rank, arrival and finish in microseconds.
#include <earlybird/collectives/plan.hpp>
#include <earlybird/collectives/simulate.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "collective_table.hpp"
#include "jobs.hpp"

namespace earlybird::bench {
namespace {

constexpr std::size_t kElemBytes = 4;  // float32, as every eb-bench job

// Arrival times in seconds, one per rank; empty: all at 0.
std::vector<double> arrivals_of(const SimulateOptions& o) {
  const std::string& spec = o.arrivals;
  if (spec.empty()) return {};
  const auto ranks = static_cast<std::size_t>(o.ranks);
  const auto colon = spec.find(':');
  const std::string mode = spec.substr(0, colon);
  if (colon != std::string::npos && (mode == "one-late" || mode == "rand-late")) {
    const double delay_s = std::stod(spec.substr(colon + 1)) / 1000;
    std::vector<double> times(ranks, 0);
    if (mode == "one-late") {
      times.back() = delay_s;
    } else {
      std::mt19937_64 random(o.seed);
      std::uniform_real_distribution<double> within(0, delay_s);
      for (double& t : times) t = within(random);
    }
    return times;
  }
  std::ifstream file(spec);
  if (!file) throw std::invalid_argument("--arrivals: '" + spec + "' is neither one-late:MS, rand-late:MS nor a file");
  std::vector<double> times;
  for (double ms; file >> ms;) times.push_back(ms / 1000);
  if (times.size() != ranks)
    throw std::invalid_argument("--arrivals: " + spec + " holds " + std::to_string(times.size()) + " times for " +
                                std::to_string(ranks) + " ranks");
  return times;
}

double us(double seconds) { return seconds * 1e6; }

void print_finishes(const coll::Simulation& sim, const std::vector<double>& arrivals) {
  if (sim.finish.size() <= 16) {
    for (std::size_t r = 0; r < sim.finish.size(); ++r)
      std::printf("  rank %3zu: arrives %12.3f us, finishes %12.3f us\n", r, arrivals.empty() ? 0 : us(arrivals[r]),
                  us(sim.finish[r]));
    return;
  }
  std::vector<double> sorted = sim.finish;
  std::sort(sorted.begin(), sorted.end());
  std::printf("  finish over ranks: min %.3f us, median %.3f us, max %.3f us\n", us(sorted.front()),
              us(sorted[sorted.size() / 2]), us(sorted.back()));
}

void print_critical_path(const coll::Schedule& schedule, const coll::Simulation& sim, int shown) {
  std::size_t transfers = 0, reductions = 0, copies = 0, port_waits = 0;
  for (const auto& s : sim.critical_path) {
    const coll::Step& step = schedule.steps()[s.step];
    if (step.is_transfer()) ++transfers;
    if (step.kind == coll::StepKind::reduce) ++reductions;
    if (step.kind == coll::StepKind::copy) ++copies;
    if (std::string(s.waited_for) == "busy") ++port_waits;
  }
  std::printf("critical path: %zu steps (%zu transfers, %zu reductions, %zu copies; %zu waited for a busy port or CPU)\n",
              sim.critical_path.size(), transfers, reductions, copies, port_waits);
  const std::size_t first =
      sim.critical_path.size() > static_cast<std::size_t>(shown) ? sim.critical_path.size() - shown : 0;
  for (std::size_t i = first; i < sim.critical_path.size(); ++i) {
    const auto& s = sim.critical_path[i];
    std::printf("  %12.3f .. %12.3f us  after %-10s  %s\n", us(s.start), us(s.finish), s.waited_for,
                coll::to_string(schedule.steps()[s.step]).c_str());
  }
}

void write_csv(const SimulateOptions& o, const coll::Simulation& sim, const std::vector<double>& arrivals) {
  if (o.csv.empty()) return;
  std::ofstream out(o.csv);
  out << "collective,algorithm,ranks,bytes,rank,arrival_us,finish_us\n";
  for (std::size_t r = 0; r < sim.finish.size(); ++r)
    out << o.collective << ',' << o.algorithm << ',' << o.ranks << ',' << o.bytes << ',' << r << ','
        << (arrivals.empty() ? 0 : us(arrivals[r])) << ',' << us(sim.finish[r]) << '\n';
}

void print_header(const SimulateOptions& o, const coll::CostModel& model) {
  std::printf("# %s\n", o.command_line.c_str());
  std::printf("# simulated (a model, not a measurement): %s %s, P = %d, %zu bytes per rank, alpha %.3g s, beta %.3g "
              "s/B, gamma %.3g s/B, copy %.3g s/B%s\n",
              o.collective.c_str(), o.algorithm.c_str(), o.ranks, o.bytes, model.alpha, model.beta, model.gamma,
              model.copy_cost(), model.transfers_on_cpu ? ", transfers on the sender's CPU" : "");
}

// --per-rank: rank 0's plan, every rank taken to run the same timeline.
int run_per_rank(const SimulateOptions& o, const coll::Algorithm& algorithm, const coll::CostModel& model,
                 const coll::AlgorithmParams& params) {
  if (!o.arrivals.empty()) throw std::invalid_argument("--per-rank takes every rank to arrive at once: no --arrivals");
  const auto start = std::chrono::steady_clock::now();
  const coll::RankPlan plan = coll::plan_for_rank(algorithm, o.ranks, o.bytes / kElemBytes, params, kElemBytes, 0);
  const auto planned = std::chrono::steady_clock::now();
  const coll::Simulation sim = coll::simulate_symmetric(plan, kElemBytes, model);
  const auto simulated = std::chrono::steady_clock::now();
  print_header(o, model);
  std::printf("# rank 0's plan alone (--per-rank: exact for rank-symmetric schedules, else rank 0's view): %zu "
              "steps; planned in %.3f s, simulated in %.3f s\n",
              plan.steps.size(), std::chrono::duration<double>(planned - start).count(),
              std::chrono::duration<double>(simulated - planned).count());
  std::printf("predicted time: %.3f us\n", us(sim.time));
  write_csv(o, sim, {});
  return 0;
}

}  // namespace

int run_simulate(const SimulateOptions& o) {
  const coll::Collective collective = collective_spec(o.collective).kind;
  const coll::Algorithm* algorithm = coll::find_algorithm(collective, o.algorithm);
  if (!algorithm)
    throw std::invalid_argument("no " + o.collective + " algorithm '" + o.algorithm + "' (" +
                                coll::algorithm_names(collective) + ")");
  coll::CostModel model = o.model;
  model.transfers_on_cpu = o.transfers_on_cpu;
  if (o.node_ranks > 0) {
    if (o.ranks % o.node_ranks != 0)
      throw std::invalid_argument("--node-ranks " + std::to_string(o.node_ranks) + " does not divide P = " +
                                  std::to_string(o.ranks));
    model.node_ranks = o.node_ranks;
    model.node_alpha = o.node_model.at(0);
    model.node_beta = o.node_model.at(1);
  }
  const std::vector<double> arrivals = arrivals_of(o);
  coll::AlgorithmParams params;
  params.segment_elems = o.segment_bytes / kElemBytes;
  params.fanout = o.fanout;
  params.node_ranks = model.node_ranks;
  if (o.per_rank) return run_per_rank(o, *algorithm, model, params);
  const auto start = std::chrono::steady_clock::now();
  const coll::Schedule schedule = algorithm->make(o.ranks, o.bytes / kElemBytes, params, kElemBytes);
  const auto built = std::chrono::steady_clock::now();
  const coll::Simulation sim = coll::simulate(schedule, kElemBytes, model, arrivals);
  const auto simulated = std::chrono::steady_clock::now();
  print_header(o, model);
  if (model.node_ranks > 0)
    std::printf("# two levels: nodes of %d ranks, inside a node alpha %.3g s, beta %.3g s/B; the above between nodes\n",
                model.node_ranks, model.node_alpha, model.node_beta);
  std::printf("# %zu steps; schedule built in %.3f s, simulated in %.3f s\n", schedule.steps().size(),
              std::chrono::duration<double>(built - start).count(),
              std::chrono::duration<double>(simulated - built).count());
  std::printf("predicted time: %.3f us\n", us(sim.time));
  print_finishes(sim, arrivals);
  print_critical_path(schedule, sim, o.path_steps);
  write_csv(o, sim, arrivals);
  return 0;
}

}  // namespace earlybird::bench
