// eb-bench calibrate: measures the cost model's parameters for the level
// this job runs on and writes a profile file the runtime reads from
// EARLYBIRD_PROFILE (collectives/predict.hpp), then checks the model: every
// validated algorithm measured against its prediction, same run.
//
// Every allreduce it times, for the fits and for the validation, is timed in
// one measurement per size, that size's algorithms interleaved round by
// round (Needs, measure_needs): a fit and the predictions checked against it
// see the same phase of the machine. The validation marks the calls a fit
// used.
//
// How (docs/algorithms.md, "The cost model"):
// - gamma, gamma_apart and copy in cache and past the caches: local passes
//   over 256 KiB and over the last-level cache's size (hwloc; at least 8
//   MiB) (b += a and c = a + b by the runtime's kernel; memcpy), the fastest
//   of several, on every rank; the slowest rank's rate counts;
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
// - line_wait, where the ranks read each other's memory (one node): peer_reads
//   allreduces over shared buffers (loads, no system call) at 8 B and 4 KiB,
//   fitted by coll::fit_line_wait once the rest is fitted, and at 64 KiB,
//   validated only (a measurement of their own: a call form holds for every
//   contender of a measurement);
// - peer_read and read_call, where process_vm_readv is allowed besides:
//   peer_reads allreduces at 4 KiB and the bandwidth sizes, fitted by
//   coll::fit_peer_reads after line_wait;
// - inline_call and inline_line on a node: inline_flags allreduces from 8 B
//   to the most the flag lines hold (1 to 36 lines per peer), fitted by
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

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
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
constexpr const char* kInlineAlgorithm = "inline_flags";
constexpr std::array<std::size_t, 4> kInlineBytes{8, 112, 280, coll::kInlineLinesBytes};
constexpr std::array<std::size_t, 5> kPeerReadBytes{4096, 64u << 10, 1u << 20, 4u << 20, 16u << 20};
// line_wait: peer_reads over shared buffers at the sizes where the waits are
// most of a call; and at 64 KiB, where the bytes are, to validate the rates
// the model charges their loads (the level's copy and gamma_apart).
constexpr std::array<std::size_t, 2> kLineWaitBytes{8, 4096};
constexpr std::array<std::size_t, 1> kMappedCheckBytes{64u << 10};

// The local passes for gamma and copy: one that stays in the caches, one
// that goes past them: buffers as large as the last-level cache, at least
// kInMemoryFloorBytes. (At a fixed 8 MiB, on a VM with a 32 MiB L3 shared
// by both ranks, part of the pass stayed in the cache and its copy rate was
// near the in-cache one: docs/benchmarks.md, "Past the caches: a pass as
// large as the last-level cache".)
constexpr std::size_t kInCacheBytes = 256u << 10;
constexpr std::size_t kInMemoryFloorBytes = 8u << 20;

// gamma, copy and gamma_apart: every rank at once over `bytes`, the slowest
// rank's best of 7. (In the caches what a third buffer adds depends on the
// level the three fit in: on this VM, 256 KiB each, 1.4-2.1x gamma with
// every rank at once, where b op= a fits the 512 KiB L2 and c = a op b does
// not; kept, as it predicted 64 KiB-1 MiB calls better: docs/benchmarks.md,
// "A reduction into a third buffer".)
coll::LocalRates measure_local_rates(std::size_t bytes) {
  const MemoryRates rates = measure_memory_rates(MPI_COMM_WORLD, bytes, 7);
  return {rates.reduce_s_per_byte, rates.copy_s_per_byte, rates.reduce_apart_s_per_byte};
}

// Every call calibrate times: per size, the algorithms the fits and the
// validation need there (Needs), timed in one measurement whose rounds
// interleave them (measure_size), so a fit and the predictions it is checked
// against see the same phase of the machine (this VM moved whole runs by 2-3x
// between launches, and by as much between calibrate's phases when each had
// its own measurement: docs/algorithms.md, "The cost model").
class Needs {
 public:
  // Names: the constants' arrays of const char* or the command line's
  // strings; sizes in bytes per rank.
  template <class Names, class Sizes>
  void add(const Names& algorithms, const Sizes& sizes) {
    for (std::size_t bytes : sizes) at_[bytes].insert(std::begin(algorithms), std::end(algorithms));
  }
  const std::map<std::size_t, std::set<std::string>>& by_size() const { return at_; }

 private:
  std::map<std::size_t, std::set<std::string>> at_;  // bytes -> algorithms
};

struct Measured {
  std::vector<coll::TimedAllreduce> calls;  // medians, every rank's slowest
  std::set<std::string> cannot_run;         // optional algorithms that failed here

  template <std::size_t N, std::size_t M>
  std::vector<coll::TimedAllreduce> of(const std::array<const char*, N>& algorithms,
                                       const std::array<std::size_t, M>& sizes) const {
    std::vector<coll::TimedAllreduce> chosen;
    for (std::size_t bytes : sizes)
      for (const char* name : algorithms)
        for (const coll::TimedAllreduce& call : calls)
          if (call.bytes == bytes && call.algorithm == name) chosen.push_back(call);
    return chosen;
  }
};

// peer_reads runs only where the ranks may read each other's memory (one
// node, process_vm_readv allowed): its failure there says so, and is not
// counted as one.
constexpr const char* kPeerReads = "peer_reads";

// One measurement per size of everything `needs` names (MPI's default first,
// as the reference), every call in `form`; a wrong result or a failed
// algorithm counts in `totals`.
Measured measure_needs(Communicator& comm, const Needs& needs, double budget, Totals& totals, CallForm form = {}) {
  const CollectiveSpec& spec = collective_spec("allreduce");
  CollectiveOptions options;
  options.blocking = true;  // timed as eb-bench sweep times them
  options.shared_buffers = form.shared_buffers;
  Measured measured;
  for (const auto& [bytes, names] : needs.by_size()) {
    std::vector<std::string> algorithms;
    for (const std::string& name : names)
      if (!measured.cannot_run.contains(name)) algorithms.push_back(name);
    std::vector<Contender> contenders{mpi_contender(spec, "mpi:default", MPI_COMM_WORLD)};
    for (const std::string& name : algorithms) contenders.push_back(earlybird_contender(spec, name, comm, options));
    const SizeResult r = measure_size(spec, contenders, bytes / kElemBytes, budget, comm.rank(), comm.size(), {}, form);
    for (std::size_t i = 1; i < contenders.size(); ++i) {
      const std::string& name = algorithms[i - 1];
      totals.wrong += r.outcomes[i].wrong;
      if (r.outcomes[i].timed()) {
        measured.calls.push_back({name, bytes, r.outcomes[i].stats.median});
      } else if (name == kPeerReads) {  // every rank agrees (measure_size)
        measured.cannot_run.insert(name);
        if (comm.rank() == 0)
          std::printf("# peer_reads cannot run here over %s buffers: not fitted from them\n",
                      form.shared_buffers ? "shared" : "ordinary");
      } else {
        ++totals.earlybird_failures;
        if (comm.rank() == 0)
          std::printf("# %s at %zu B failed: %s\n", name.c_str(), bytes, r.outcomes[i].error.c_str());
      }
    }
  }
  return measured;
}

// Calls of one call form, and those of them a fit used.
struct Timed {
  const Measured& measured;
  const std::vector<coll::TimedAllreduce>& fitted;
  bool used_by_a_fit(const coll::TimedAllreduce& call) const {
    return std::any_of(fitted.begin(), fitted.end(), [&](const coll::TimedAllreduce& f) {
      return f.bytes == call.bytes && f.algorithm == call.algorithm;
    });
  }
};

// Measured against predicted for the validated algorithms over ordinary
// buffers, and for every peer_reads call over shared ones (`mapped`); how
// many within 25 %, and how many of those no fit used.
void validate(Communicator& comm, const CalibrateOptions& o, const coll::LevelCosts& costs, const std::string& level,
              const Timed& ordinary, const Timed& mapped) {
  if (comm.rank() != 0) return;
  std::printf("\n# validation: measured median vs the model's prediction (same measurement as the fits); ratio = "
              "predicted / measured; fit: whether a fit used this call\n"
              "%10s  %-20s %12s %12s %7s %4s\n",
              "bytes", "algorithm", "measured us", "predicted us", "ratio", "fit");
  int within = 0, total = 0, held_out = 0, held_out_within = 0;
  const auto row = [&](const coll::TimedAllreduce& s, bool shared_buffers, bool in_fit) {
    const coll::DirectPaths paths{.inline_lines = level == "node", .peers_mapped = shared_buffers};
    const double prediction =
        coll::predict_entry(coll::Collective::allreduce, *coll::find_algorithm(coll::Collective::allreduce, s.algorithm),
                            comm.size(), s.bytes / kElemBytes, kElemBytes, costs, paths);
    const double ratio = prediction / s.seconds;
    const bool close = ratio >= 0.75 && ratio <= 1.25;
    ++total;
    within += close ? 1 : 0;
    held_out += in_fit ? 0 : 1;
    held_out_within += !in_fit && close ? 1 : 0;
    const std::string name = s.algorithm + (shared_buffers ? " (shared)" : "");
    std::printf("%10zu  %-20s %12.1f %12.1f %7.2f %4s\n", s.bytes, name.c_str(), s.seconds * 1e6, prediction * 1e6,
                ratio, in_fit ? "yes" : "no");
  };
  for (std::size_t bytes : o.validate_sizes)
    for (const std::string& name : o.validate_algorithms)
      for (const coll::TimedAllreduce& s : ordinary.measured.calls)
        if (s.bytes == bytes && s.algorithm == name && !(name == kPeerReads && costs.peer_read == 0))
          row(s, false, ordinary.used_by_a_fit(s));
  for (const coll::TimedAllreduce& s : mapped.measured.calls) row(s, true, mapped.used_by_a_fit(s));
  std::printf("# %d of %d predictions within 25 %% of the measured time (%d of the %d calls no fit used)\n", within,
              total, held_out_within, held_out);
}

// The arrival board's costs: ticket from the ticket-bound entry, then
// decision from the decided one (whose prediction includes the ticket).
void fit_board(int rank, int ranks, const Measured& measured, std::vector<coll::TimedAllreduce>& fitted,
               coll::LevelCosts& costs) {
  const struct {
    std::array<const char*, 1> algorithm;
    double coll::LevelCosts::*cost;
    const char* what;
  } parts[] = {{{kTicketAlgorithm}, &coll::LevelCosts::ticket, "ticket"},
               {{kDecisionAlgorithm}, &coll::LevelCosts::decision, "decision"}};
  for (const auto& part : parts) {
    const std::vector<coll::TimedAllreduce> calls = measured.of(part.algorithm, kLatencyBytes);
    fitted.insert(fitted.end(), calls.begin(), calls.end());
    const double error = coll::fit_board_cost(calls, ranks, costs, part.cost);
    if (rank == 0)
      std::printf("# arrival board: %s %.3g s per %s call (RMS relative error %.2f over %zu calls)\n", part.what,
                  costs.*part.cost, part.algorithm[0], error, calls.size());
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

// Where the ranks load and read each other's memory (one node, ranks not
// outnumbering the hardware threads): line_wait from the calls over shared
// buffers (`mapped`), then peer_read and read_call, then inline_call and
// inline_line, once the rest of the level is fitted.
void fit_node_paths(int rank, int ranks, const Measured& measured, const Measured& mapped,
                    std::vector<coll::TimedAllreduce>& fitted, std::vector<coll::TimedAllreduce>& fitted_mapped,
                    coll::LevelCosts& costs) {
  const std::vector<coll::TimedAllreduce> waits = mapped.of(std::array{kPeerReads}, kLineWaitBytes);
  if (!waits.empty()) {
    const double error = coll::fit_line_wait(waits, ranks, costs);
    if (rank == 0)
      std::printf("# peer reads over shared buffers: line_wait %.3g s per flag line waited on (RMS relative error "
                  "%.2f over %zu calls)\n",
                  costs.line_wait, error, waits.size());
    fitted_mapped.insert(fitted_mapped.end(), waits.begin(), waits.end());
  }
  const std::vector<coll::TimedAllreduce> reads = measured.of(std::array{kPeerReads}, kPeerReadBytes);
  costs.peer_read = costs.memory.peer_read = costs.read_call = 0;  // what the profile started with is not this level's
  if (!reads.empty()) {
    const double error = coll::fit_peer_reads(reads, ranks, costs);
    if (rank == 0)
      std::printf("# peer reads: peer_read %.3g s/B (past the caches %.3g), read_call %.3g s (RMS relative error %.2f "
                  "over %zu calls)\n",
                  costs.peer_read, costs.memory.peer_read, costs.read_call, error, reads.size());
  }
  const std::vector<coll::TimedAllreduce> lines = measured.of(std::array{kInlineAlgorithm}, kInlineBytes);
  const double error = coll::fit_inline_lines(lines, ranks, costs);
  if (rank == 0)
    std::printf("# inline lines: inline_call %.3g s, inline_line %.3g s (RMS relative error %.2f over %zu calls)\n",
                costs.inline_call, costs.inline_line, error, lines.size());
  fitted.insert(fitted.end(), reads.begin(), reads.end());
  fitted.insert(fitted.end(), lines.begin(), lines.end());
}

void print_level(const std::string& level, int ranks, const coll::LevelCosts& costs) {
  std::printf("# %s level, P = %d: alpha %.3g s, beta %.3g s/B, gamma %.3g s/B (into a third buffer %.3g), copy "
              "%.3g s/B, per_step %.3g s, per_call %.3g s\n",
              level.c_str(), ranks, costs.model.alpha, costs.model.beta, costs.model.gamma,
              costs.model.reduce_cost(true), costs.model.copy_cost(), costs.model.per_step, costs.per_call);
  if (costs.memory.from_bytes > 0)
    std::printf("# past the caches (from %.0f bytes per rank x ranks): beta %.3g s/B, gamma %.3g s/B (into a third "
                "buffer %.3g), copy %.3g s/B (local passes over %zu bytes)\n",
                costs.memory.from_bytes, costs.memory.beta, costs.memory.gamma, costs.memory.gamma_apart,
                costs.memory.copy, past_caches_bytes(kInMemoryFloorBytes));
  else
    std::printf("# one regime: a second beta past the caches did not cut the error enough\n");
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
  // More ranks than the node's hardware threads: the times are the ranks'
  // switches as much as the hardware's, so only the switch is fitted.
  const int threads = static_cast<int>(std::thread::hardware_concurrency());
  const bool shares_cores = level == "node" && threads > 0 && ranks > threads;
  const bool validating = !o.validate_sizes.empty() && o.validate_algorithms != std::vector<std::string>{"none"};
  Needs needs;
  needs.add(kLatencyAlgorithms, kLatencyBytes);
  needs.add(kBandwidthAlgorithms, kBandwidthBytes);
  if (!shares_cores) needs.add(std::array{kTicketAlgorithm, kDecisionAlgorithm}, kLatencyBytes);
  if (!shares_cores && level == "node") {
    needs.add(std::array{kPeerReads}, kPeerReadBytes);
    needs.add(std::array{kInlineAlgorithm}, kInlineBytes);
  }
  if (validating) needs.add(o.validate_algorithms, o.validate_sizes);

  Totals totals;
  const coll::LocalRates in_cache = measure_local_rates(kInCacheBytes);
  const coll::LocalRates in_memory = measure_local_rates(past_caches_bytes(kInMemoryFloorBytes));
  const Measured measured = measure_needs(comm, needs, o.budget_s, totals);
  Needs mapped_needs;
  if (!shares_cores && level == "node") {
    mapped_needs.add(std::array{kPeerReads}, kLineWaitBytes);
    mapped_needs.add(std::array{kPeerReads}, kMappedCheckBytes);
  }
  const Measured mapped = measure_needs(comm, mapped_needs, o.budget_s, totals, {.shared_buffers = true});
  const std::vector<coll::TimedAllreduce> small = measured.of(kLatencyAlgorithms, kLatencyBytes);
  const std::vector<coll::TimedAllreduce> large = measured.of(kBandwidthAlgorithms, kBandwidthBytes);
  std::vector<coll::TimedAllreduce> fitted = small, fitted_mapped;
  fitted.insert(fitted.end(), large.begin(), large.end());
  if (shares_cores) {
    const double error = coll::fit_wake(fitted, ranks, threads, costs);
    if (rank == 0)
      std::printf("# node level, P = %d on %d hardware threads: wake %.3g s (RMS of log(predicted / measured) "
                  "%.2f); the other node parameters kept from %s: calibrate with at most %d ranks to measure them\n",
                  ranks, threads, costs.wake, error, profile.source.c_str(), threads);
  } else {
    coll::fit_level(small, large, ranks, in_cache, in_memory, costs);
    if (level == "node") fit_node_paths(rank, ranks, measured, mapped, fitted, fitted_mapped, costs);
    fit_board(rank, ranks, measured, fitted, costs);
    if (rank == 0) print_level(level, ranks, costs);
  }
  if (totals.exit_code() == 0 && rank == 0 && !o.output.empty()) {
    write_profile(o, profile, level, ranks);
    std::printf("# written to %s (EARLYBIRD_PROFILE=%s)\n", o.output.c_str(), o.output.c_str());
  }
  if (validating) validate(comm, o, costs, level, {measured, fitted}, {mapped, fitted_mapped});
  return totals.exit_code();
}

}  // namespace earlybird::bench
