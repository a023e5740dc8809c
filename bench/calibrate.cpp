// eb-bench calibrate: measures the cost model's parameters for the level
// this job runs on and writes a profile file the runtime reads from
// EARLYBIRD_PROFILE (collectives/predict.hpp), then checks the model: every
// validated algorithm measured against its prediction, same run.
//
// How (docs/algorithms.md, "The cost model"):
// - gamma and copy in cache and past the caches: local passes over 256 KiB
//   and 8 MiB (b += a by the runtime's kernel; memcpy), the fastest of
//   several, on every rank; the slowest rank's rate counts;
// - per_call, alpha, per_step from 8-byte and 4 KiB allreduces of
//   algorithms with different round and step counts, beta from 64 KiB to
//   16 MiB allreduces (ring, Rabenseifner, recursive doubling): the
//   measured medians go to coll::fit_level (collectives/calibration.hpp),
//   which alternates a latency fit and a beta fit, and keeps a second
//   regime past the caches where one beta cannot follow both.
// Linear is left out of the latency fit: the model serialises its P - 1
// transfers into rank 0 on one port (P - 1 latencies), where on a node the
// senders store into the window at once (16 cores, P = 16, 8 B: ~4 us against
// a modelled 30 alpha); with it the fit held alpha at 0 and auto chose
// many-round algorithms at 512 B-4 KiB. The ring's 2(P - 1) dependent rounds
// pin alpha down.
// With more ranks than the node's hardware threads (an oversubscribed node)
// only `wake`, the switch between ranks, is fitted (coll::fit_wake), over the
// same calls, the other parameters kept from the profile it started from:
// there the times measure the switches more than the hardware.
// - peer_read and read_call, where the ranks read each other's memory (one
//   node, process_vm_readv allowed): peer_reads allreduces at 4 KiB and the
//   bandwidth sizes, fitted by coll::fit_peer_reads once the rest is fitted;
// - inline_call and inline_line on a node: inline_flags allreduces from 8 B
//   to the most the flag lines hold (1 to 40 lines per peer), fitted by
//   coll::fit_inline_lines once gamma is measured;
// - ticket, the arrival board's cost per arrival-ordered call: arrival_chain
//   allreduces at the latency sizes, every rank on time, against their
//   schedule's prediction (coll::fit_board_cost) once the rest is fitted;
//   then decision, what a published decision adds: pre_reduced_ring
//   allreduces (the first arrival decides, the others read it) the same way.
// Every call's result is checked against the MPI library's; a wrong one fails
// the job (exit 2) and writes no profile.
#include <mpi.h>

#include <earlybird/collectives/calibration.hpp>
#include <earlybird/collectives/predict.hpp>
#include <earlybird/machine_probe.hpp>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <thread>
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
constexpr const char* kTicketAlgorithm = "arrival_chain";
constexpr const char* kDecisionAlgorithm = "pre_reduced_ring";
constexpr std::array<const char*, 3> kBandwidthAlgorithms{"ring", "rabenseifner", "recursive_doubling"};
constexpr std::array<std::size_t, 4> kBandwidthBytes{64u << 10, 1u << 20, 4u << 20, 16u << 20};
constexpr std::array<std::size_t, 4> kInlineBytes{8, 112, 280, coll::kInlineLinesBytes};

// The local passes for gamma and copy: one that stays in the caches, one
// that goes past them.
constexpr std::size_t kInCacheBytes = 256u << 10;
constexpr std::size_t kInMemoryBytes = 8u << 20;

// gamma and copy: every rank at once over `bytes`, the slowest rank's best
// of 7.
coll::LocalRates measure_local_rates(std::size_t bytes) {
  const MemoryRates rates = measure_memory_rates(MPI_COMM_WORLD, bytes, 7);
  return {rates.reduce_s_per_byte, rates.copy_s_per_byte};
}

// Medians of `algorithms` at `bytes` (MPI's default first, as the reference).
std::vector<coll::TimedAllreduce> measure(Communicator& comm, const std::vector<const char*>& algorithms,
                                          std::size_t bytes, double budget, Totals& totals) {
  const CollectiveSpec& spec = collective_spec("allreduce");
  std::vector<Contender> contenders{mpi_contender(spec, "mpi:default", MPI_COMM_WORLD)};
  CollectiveOptions options;
  options.blocking = true;  // timed as eb-bench sweep times them
  for (const char* name : algorithms) contenders.push_back(earlybird_contender(spec, name, comm, options));
  const SizeResult r = measure_size(spec, contenders, bytes / kElemBytes, budget, comm.rank(), comm.size());
  std::vector<coll::TimedAllreduce> samples;
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
std::vector<coll::TimedAllreduce> measure_all(Communicator& comm, const std::vector<const char*>& algorithms,
                                              const std::array<std::size_t, N>& sizes, const CalibrateOptions& o,
                                              Totals& totals) {
  std::vector<coll::TimedAllreduce> all;
  for (std::size_t bytes : sizes)
    for (const coll::TimedAllreduce& s : measure(comm, algorithms, bytes, o.budget_s, totals)) all.push_back(s);
  return all;
}

// peer_reads allreduces at 4 KiB and the bandwidth sizes; none where the
// ranks cannot read each other's memory (a first call failing on any rank
// says so: reported, not counted as a failure, and the profile then says
// peer_read 0: auto leaves the entry out).
std::vector<coll::TimedAllreduce> measure_peer_reads(Communicator& comm, const CalibrateOptions& o, Totals& totals) {
  std::vector<std::size_t> sizes{kLatencyBytes.back()};
  sizes.insert(sizes.end(), kBandwidthBytes.begin(), kBandwidthBytes.end());
  std::vector<coll::TimedAllreduce> all;
  for (std::size_t bytes : sizes) {
    Totals here;
    const std::vector<coll::TimedAllreduce> timed = measure(comm, {"peer_reads"}, bytes, o.budget_s, here);
    totals.wrong += here.wrong;
    long long failed = here.earlybird_failures;
    MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    if (failed) {
      if (comm.rank() == 0) std::printf("# peer_reads cannot run here: peer_read not fitted (auto leaves it out)\n");
      return {};
    }
    all.insert(all.end(), timed.begin(), timed.end());
  }
  return all;
}

// Measured against predicted for the validated algorithms; how many within 25 %.
void validate(Communicator& comm, const CalibrateOptions& o, const coll::LevelCosts& costs, const std::string& level,
              Totals& totals) {
  const int rank = comm.rank();
  if (rank == 0)
    std::printf("\n# validation: measured median vs the model's prediction (same run); ratio = predicted / measured\n"
                "%10s  %-20s %12s %12s %7s\n",
                "bytes", "algorithm", "measured us", "predicted us", "ratio");
  int within = 0, total = 0;
  std::vector<const char*> names;
  for (const std::string& a : o.validate_algorithms)
    if (a != "peer_reads" || costs.peer_read > 0) names.push_back(a.c_str());  // where it was measured
  for (std::size_t bytes : o.validate_sizes) {
    for (const coll::TimedAllreduce& s : measure(comm, names, bytes, o.budget_s, totals)) {
      const double prediction =
          coll::predict_entry(coll::Collective::allreduce, *coll::find_algorithm(coll::Collective::allreduce, s.algorithm),
                              comm.size(), bytes / kElemBytes, kElemBytes, costs, {.inline_lines = level == "node"});
      const double ratio = prediction / s.seconds;
      ++total;
      if (ratio >= 0.75 && ratio <= 1.25) ++within;
      if (rank == 0)
        std::printf("%10zu  %-20s %12.1f %12.1f %7.2f\n", bytes, s.algorithm.c_str(), s.seconds * 1e6,
                    prediction * 1e6, ratio);
    }
  }
  if (rank == 0) std::printf("# %d of %d predictions within 25 %% of the measured time\n", within, total);
}

// The arrival board's costs: ticket from the ticket-bound entry, then
// decision from the decided one (whose prediction includes the ticket).
void fit_board(Communicator& comm, int ranks, const CalibrateOptions& o, Totals& totals, coll::LevelCosts& costs) {
  const struct {
    const char* algorithm;
    double coll::LevelCosts::*cost;
    const char* what;
  } parts[] = {{kTicketAlgorithm, &coll::LevelCosts::ticket, "ticket"},
               {kDecisionAlgorithm, &coll::LevelCosts::decision, "decision"}};
  for (const auto& part : parts) {
    const std::vector<coll::TimedAllreduce> calls = measure_all(comm, {part.algorithm}, kLatencyBytes, o, totals);
    const double error = coll::fit_board_cost(calls, ranks, costs, part.cost);
    if (comm.rank() == 0)
      std::printf("# arrival board: %s %.3g s per %s call (RMS relative error %.2f over %zu calls)\n", part.what,
                  costs.*part.cost, part.algorithm, error, calls.size());
  }
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
  const coll::LocalRates in_cache = measure_local_rates(kInCacheBytes);
  const coll::LocalRates in_memory = measure_local_rates(kInMemoryBytes);
  const std::vector<coll::TimedAllreduce> small =
      measure_all(comm, {kLatencyAlgorithms.begin(), kLatencyAlgorithms.end()}, kLatencyBytes, o, totals);
  const std::vector<coll::TimedAllreduce> large =
      measure_all(comm, {kBandwidthAlgorithms.begin(), kBandwidthAlgorithms.end()}, kBandwidthBytes, o, totals);
  // More ranks than the node's hardware threads: the times are the ranks'
  // switches as much as the hardware's, so only the switch is fitted.
  const int threads = static_cast<int>(std::thread::hardware_concurrency());
  if (level == "node" && threads > 0 && ranks > threads) {
    std::vector<coll::TimedAllreduce> all = small;
    all.insert(all.end(), large.begin(), large.end());
    const double error = coll::fit_wake(all, ranks, threads, costs);
    if (rank == 0)
      std::printf("# node level, P = %d on %d hardware threads: wake %.3g s (RMS of log(predicted / measured) "
                  "%.2f); the other node parameters kept from %s: calibrate with at most %d ranks to measure them\n",
                  ranks, threads, costs.wake, error, profile.source.c_str(), threads);
  } else {
    coll::fit_level(small, large, ranks, in_cache, in_memory, costs);
    if (level == "node") {
      const std::vector<coll::TimedAllreduce> reads = measure_peer_reads(comm, o, totals);
      // What the profile started with is not this level's.
      costs.peer_read = costs.memory.peer_read = costs.read_call = 0;
      if (!reads.empty()) {
        const double error = coll::fit_peer_reads(reads, ranks, costs);
        if (rank == 0)
          std::printf("# peer reads: peer_read %.3g s/B (past the caches %.3g), read_call %.3g s (RMS relative "
                      "error %.2f over %zu calls)\n",
                      costs.peer_read, costs.memory.peer_read, costs.read_call, error, reads.size());
      }
      const std::vector<coll::TimedAllreduce> lines = measure_all(comm, {"inline_flags"}, kInlineBytes, o, totals);
      const double error = coll::fit_inline_lines(lines, ranks, costs);
      if (rank == 0)
        std::printf("# inline lines: inline_call %.3g s, inline_line %.3g s (RMS relative error %.2f over %zu calls)\n",
                    costs.inline_call, costs.inline_line, error, lines.size());
    }
    fit_board(comm, ranks, o, totals, costs);
  }
  if (rank == 0 && costs.model.cores == 0) {
    std::printf("# %s level, P = %d: alpha %.3g s, beta %.3g s/B, gamma %.3g s/B, copy %.3g s/B, per_step %.3g s, "
                "per_call %.3g s\n",
                level.c_str(), ranks, costs.model.alpha, costs.model.beta, costs.model.gamma, costs.model.copy_cost(),
                costs.model.per_step, costs.per_call);
    if (costs.memory.from_bytes > 0)
      std::printf("# past the caches (from %.0f bytes per rank x ranks): beta %.3g s/B, gamma %.3g s/B, copy %.3g s/B\n",
                  costs.memory.from_bytes, costs.memory.beta, costs.memory.gamma, costs.memory.copy);
    else
      std::printf("# one regime: a second beta past the caches did not cut the error enough\n");
  }
  if (totals.exit_code() == 0 && rank == 0 && !o.output.empty()) {
    write_profile(o, profile, level, ranks);
    std::printf("# written to %s (EARLYBIRD_PROFILE=%s)\n", o.output.c_str(), o.output.c_str());
  }
  if (!o.validate_sizes.empty() && o.validate_algorithms != std::vector<std::string>{"none"})
    validate(comm, o, costs, level, totals);
  return totals.exit_code();
}

}  // namespace earlybird::bench
