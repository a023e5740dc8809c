#include <earlybird/collectives/predict.hpp>

#include "remembered.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

namespace earlybird::coll {
namespace {

LevelCosts& level_named(MachineProfile& profile, std::string_view level) {
  if (level == "node") return profile.node;
  if (level == "network") return profile.network;
  throw std::invalid_argument("unknown level '" + std::string(level) + "' (node, network)");
}

double& field_named(LevelCosts& costs, std::string_view key) {
  if (key == "alpha") return costs.model.alpha;
  if (key == "beta") return costs.model.beta;
  if (key == "gamma") return costs.model.gamma;
  if (key == "copy") return costs.model.copy_per_byte;
  if (key == "gamma_apart") return costs.model.gamma_apart;
  if (key == "memory_gamma_apart") return costs.memory.gamma_apart;
  if (key == "per_step") return costs.model.per_step;
  if (key == "per_call") return costs.per_call;
  if (key == "wake") return costs.wake;
  if (key == "memory_from") return costs.memory.from_bytes;
  if (key == "memory_beta") return costs.memory.beta;
  if (key == "memory_gamma") return costs.memory.gamma;
  if (key == "memory_copy") return costs.memory.copy;
  if (key == "peer_read") return costs.peer_read;
  if (key == "memory_peer_read") return costs.memory.peer_read;
  if (key == "read_call") return costs.read_call;
  if (key == "line_wait") return costs.line_wait;
  if (key == "inline_call") return costs.inline_call;
  if (key == "inline_line") return costs.inline_line;
  if (key == "ticket") return costs.ticket;
  if (key == "decision") return costs.decision;
  throw std::invalid_argument("unknown key '" + std::string(key) +
                              "' (alpha, beta, gamma, copy, per_step, per_call, wake, memory_from, memory_beta, "
                              "memory_gamma, memory_copy, peer_read, memory_peer_read, read_call, line_wait, inline_call, "
                              "inline_line, ticket, decision, gamma_apart, memory_gamma_apart, transfers_on_cpu)");
}

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t\r") - first + 1);
}

// One `level.key = value` line into `profile`.
void apply_line(MachineProfile& profile, const std::string& line) {
  const auto equals = line.find('=');
  const std::string name = trimmed(line.substr(0, equals));
  const auto dot = name.find('.');
  if (equals == std::string::npos || dot == std::string::npos) throw std::invalid_argument("expected level.key = value");
  LevelCosts& level = level_named(profile, name.substr(0, dot));
  const std::string key = name.substr(dot + 1), value = trimmed(line.substr(equals + 1));
  if (key == "transfers_on_cpu") {
    if (value != "0" && value != "1") throw std::invalid_argument("transfers_on_cpu is 0 or 1, not '" + value + "'");
    level.model.transfers_on_cpu = value == "1";
    return;
  }
  field_named(level, key) = parse_non_negative(value);
}

void format_level(std::ostringstream& out, const char* level, const LevelCosts& c) {
  out << level << ".alpha = " << c.model.alpha << '\n'
      << level << ".beta = " << c.model.beta << '\n'
      << level << ".gamma = " << c.model.gamma << '\n'
      << level << ".copy = " << c.model.copy_cost() << '\n'
      << level << ".gamma_apart = " << c.model.reduce_cost(true) << '\n'
      << level << ".per_step = " << c.model.per_step << '\n'
      << level << ".per_call = " << c.per_call << '\n'
      << level << ".wake = " << c.wake << '\n'
      << level << ".memory_from = " << c.memory.from_bytes << '\n'
      << level << ".memory_beta = " << c.memory.beta << '\n'
      << level << ".memory_gamma = " << c.memory.gamma << '\n'
      << level << ".memory_copy = " << c.memory.copy << '\n'
      << level << ".memory_gamma_apart = " << c.memory.gamma_apart << '\n'
      << level << ".peer_read = " << c.peer_read << '\n'
      << level << ".memory_peer_read = " << c.memory.peer_read << '\n'
      << level << ".read_call = " << c.read_call << '\n'
      << level << ".line_wait = " << c.line_wait << '\n'
      << level << ".inline_call = " << c.inline_call << '\n'
      << level << ".inline_line = " << c.inline_line << '\n'
      << level << ".ticket = " << c.ticket << '\n'
      << level << ".decision = " << c.decision << '\n'
      << level << ".transfers_on_cpu = " << (c.model.transfers_on_cpu ? 1 : 0) << '\n';
}

}  // namespace

double parse_non_negative(const std::string& text) {
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || !std::isfinite(value) || value < 0)
    throw std::invalid_argument("'" + text + "' is not a non-negative number");
  return value;
}

MachineProfile default_profile() {
  MachineProfile profile;
  // One run of eb-bench calibrate, P = 2, one node (2-core VM, AMD EPYC,
  // Open MPI 4.1.4), 2026-11-29, once calibrate measured line_wait: every
  // node parameter but wake from that measurement (35 of 38 predictions
  // within 25 %, as in the two other runs that hour; line_wait 0.25, 0.28
  // and 0.26 us). In cache, and past the caches from 4 MiB x P; a reduction
  // into a third buffer (gamma_apart) from the local passes.
  // docs/benchmarks.md, "A flag line's wait on the direct paths".
  // The rates past the caches (beta, gamma, copy, gamma_apart, peer_read)
  // are the medians of three later runs (2026-12-03) whose local passes
  // cover the whole last-level cache: that run's passes had stayed in it
  // (copy 2.8e-11 s/B). docs/benchmarks.md, "The node defaults' memory
  // regime, adopted".
  profile.node = {CostModel{4.463e-7, 7.193e-11, 2.186e-11, 9.327e-12, 0}, 6.202e-7,
                  MemoryRegime{4.0 * (1 << 20), 8.071e-11, 1.504e-10, 1.473e-10, 1.835e-10}};
  profile.node.model.gamma_apart = 2.721e-11;
  profile.node.memory.gamma_apart = 1.945e-10;
  // Inside a node the runtime's puts are copies on the sending rank's core.
  profile.node.model.transfers_on_cpu = true;
  profile.node.peer_read = 1.198e-10;
  profile.node.read_call = 3.264e-6;
  profile.node.line_wait = 2.595e-7;
  // inline_call, inline_line: the inline lines' new layout (one word, then
  // the data), eb-bench calibrate at P = 2, 2026-12-02: of eight runs the
  // one whose per_call + alpha (0.99 us) came nearest the parameters above
  // (1.07 us). This VM's runs fall in two phases: per_call + alpha
  // 0.70-1.00 us with inline_line 2.9-6.7 ns, and 1.28-1.66 us with 20-30
  // ns (docs/benchmarks.md, "The inline lines: one word, contiguous data").
  profile.node.inline_call = 4.069e-7;
  profile.node.inline_line = 5.713e-9;
  profile.node.ticket = 8.035e-7;
  profile.node.decision = 8.313e-7;
  // wake: eb-bench calibrate at P = 4 on the same VM (4 ranks on 2 cores)
  // from the parameters above, the same hour, once a rank's waits at one
  // depth counted one wake (waits_on_other_ranks): 4.36, 5.40 and 4.63 us in
  // three runs (5.16, 4.38 and 6.03 before).
  profile.node.wake = 4.63e-6;
  // The same, 2 emulated hosts x 1 rank, 1 Gbit/s (scripts/cluster.sh), 2026-11-24.
  profile.network = {CostModel{1.17e-5, 6.81e-9, 5.57e-11, 4.47e-11, 0}, 1.25e-5};
  // ticket: the same hosts, eb-bench calibrate, 2026-11-27 (the board's
  // round trips to rank 0 over the point-to-point transport; 106-123 us in
  // two runs once the arrival record was posted, 221 us before).
  profile.network.ticket = 1.1e-4;
  // decision: the same hosts, eb-bench calibrate (104, 140 and 160 us in
  // three runs: the first arrival's published decision read from rank 0's
  // board), 2026-11-28.
  profile.network.decision = 1.4e-4;
  return profile;
}

MachineProfile read_profile(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw std::invalid_argument("profile " + path + ": cannot be read");
  MachineProfile profile = default_profile();
  profile.source = path;
  std::string line;
  for (int number = 1; std::getline(file, line); ++number) {
    line = trimmed(line.substr(0, line.find('#')));
    if (line.empty()) continue;
    try {
      apply_line(profile, line);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("profile " + path + ", line " + std::to_string(number) + ": " + e.what());
    }
  }
  return profile;
}

std::string format_profile(const MachineProfile& profile) {
  std::ostringstream out;
  out.precision(4);
  format_level(out, "node", profile.node);
  format_level(out, "network", profile.network);
  return out.str();
}

LevelCosts spanning_nodes(const MachineProfile& profile, int node_ranks) {
  LevelCosts costs = profile.network;
  costs.model.node_ranks = node_ranks;
  costs.model.node_alpha = profile.node.model.alpha;
  costs.model.node_beta = profile.node.model.beta;
  costs.model.transfers_on_cpu = profile.node.model.transfers_on_cpu;
  return costs;
}

namespace {

// A schedule's simulated time, and its waits on other ranks.
struct Simulated {
  double time = 0;
  WaitsOnOthers waits;
};

Simulated simulated_now(const Algorithm& algorithm, int ranks, std::size_t count, std::size_t elem_bytes,
                        std::size_t segment_elems, const CostModel& model) {
  AlgorithmParams params;
  params.node_ranks = model.node_ranks;
  params.segment_elems = segment_elems;
  const Schedule schedule = algorithm.make(ranks, count, params, elem_bytes);
  return {simulate(schedule, elem_bytes, model).time, waits_on_other_ranks(schedule)};
}

// A simulation's inputs: the model is a pure function of them.
struct SimulationKey {
  std::uintptr_t make;  // Algorithm::make, what the schedule is
  int ranks;
  std::size_t count;
  std::size_t elem_bytes;
  std::size_t segment_elems;
  CostModel model;
  auto operator<=>(const SimulationKey&) const = default;
};

// The simulations already run in this process. The same ones recur: every
// class past kSimulatedCount extrapolates from the same one, and a
// non-commutative class re-ranks the commutative class's algorithms. Built
// and simulated outside the lock (milliseconds at P = 64).
Simulated simulated(const Algorithm& algorithm, int ranks, std::size_t count, std::size_t elem_bytes,
                    std::size_t segment_elems, const CostModel& model) {
  static detail::Remembered<SimulationKey, Simulated> times(std::size_t{1} << 16);
  return times.get(
      {reinterpret_cast<std::uintptr_t>(algorithm.make), ranks, count, elem_bytes, segment_elems, model},
      [&] { return simulated_now(algorithm, ranks, count, elem_bytes, segment_elems, model); });
}

// The largest buffer a rank holds: what decides whether a call is past
// the caches (an allgather's output and a reduce-scatter's input are P
// blocks).
std::size_t rank_buffer_bytes(Collective collective, int ranks, std::size_t count, std::size_t elem_bytes) {
  const Shape shape = shape_of(collective, ranks, count);
  return std::max(shape.input, shape.output) * elem_bytes;
}

// The wakes a schedule costs where ranks share `cores` CPUs: the cores
// serve the waiting ranks' wakes `cores` at a time, and a chain of waits
// cannot be shortened.
double wakes(const WaitsOnOthers& waits, int cores) {
  return std::max(static_cast<double>(waits.longest), static_cast<double>(waits.total) / cores);
}

// A call with no schedule whose slowest rank does `work` (seconds), `busy`
// ranks working alike (the others only publish and wait), its ranks waiting
// on their peers `waits` times: where the ranks share cores, the busy ranks
// take turns (the work grows by busy / cores where they outnumber the cores)
// and the waits cost wakes as a schedule's do.
double in_turns(const LevelCosts& costs, int ranks, double work, int busy, WaitsOnOthers waits) {
  if (!costs.shares_cores(ranks)) return work;
  const int cores = costs.model.cores;
  return work * std::max(1.0, static_cast<double>(busy) / cores) + wakes(waits, cores) * costs.wake;
}

}  // namespace

bool LevelCosts::past_caches(std::size_t bytes, int ranks) const {
  return memory.from_bytes > 0 && static_cast<double>(bytes) * ranks >= memory.from_bytes;
}

CostModel LevelCosts::model_for(std::size_t bytes, int ranks) const {
  CostModel chosen = model;
  if (past_caches(bytes, ranks)) {
    chosen.beta = memory.beta;
    chosen.gamma = memory.gamma;
    chosen.copy_per_byte = memory.copy;
    chosen.gamma_apart = memory.gamma_apart > 0 ? memory.gamma_apart : -1;
  }
  return chosen;
}

namespace {

// Past kSimulatedCount a call is simulated as its copy shrunk `scale` times:
// the same steps (a pipelined algorithm's segments shrunk alike, so as many
// of them and as long a fill), every step's bytes and its latencies divided
// by `scale`, so the simulated time times `scale` is the call's. (Until
// 2026-12-03 the segments kept their bytes: a chain of 1 MiB segments at
// 16 MiB was priced as four times its 4 MiB pipeline, fill and drain
// included, 1.55 times its whole simulation at P = 4.) The shrunk copy
// holds at most kMostSimulatedSegments segments (fewer only where the call
// itself has more): a pipeline's fill is then overcounted by at most its
// depth over that many segments, and a choice at 1 GiB stays under a second.
constexpr std::size_t kMostSimulatedSegments = 256;

std::size_t scaled_segment(const Algorithm& algorithm, std::size_t segment_elems, std::size_t elem_bytes,
                           double scale) {
  if (!algorithm.pipelined || scale == 1.0) return segment_elems;
  const std::size_t real = segment_elems ? segment_elems
                                         : std::max<std::size_t>(1, algorithm.default_segment_bytes / elem_bytes);
  const auto shrunk = static_cast<std::size_t>(std::llround(static_cast<double>(real) / scale));
  return std::max({std::size_t{1}, shrunk, std::min(real, kSimulatedCount / kMostSimulatedSegments)});
}

CostModel scaled_latencies(CostModel model, double scale) {
  model.alpha /= scale;
  model.node_alpha /= scale;
  model.per_step /= scale;
  return model;
}

}  // namespace

double predict(const Algorithm& algorithm, int ranks, std::size_t count, std::size_t elem_bytes,
               const LevelCosts& costs, std::size_t segment_elems) {
  const CostModel model = costs.model_for(rank_buffer_bytes(collective_of(algorithm), ranks, count, elem_bytes), ranks);
  const std::size_t simulated_count = std::min(count, kSimulatedCount);
  const double scale = count > kSimulatedCount ? static_cast<double>(count) / kSimulatedCount : 1.0;
  const Simulated s = simulated(algorithm, ranks, simulated_count, elem_bytes,
                                scaled_segment(algorithm, segment_elems, elem_bytes, scale),
                                scaled_latencies(model, scale));
  return s.time * scale + (costs.shares_cores(ranks) ? wakes(s.waits, costs.model.cores) * costs.wake : 0) +
         costs.per_call;
}

namespace {

// What one peer_reads call asks of a rank (runtime/src/exec/peer_reads.hpp's
// cost table; m bytes per rank's vector, or per block).
struct PeerReadLoad {
  double read = 0;     // bytes this rank reads (the most over the ranks)
  double served = 0;   // bytes read out of one rank's buffers (the most)
  double reduced = 0;  // bytes this rank folds
  double calls = 0;    // read system calls of this rank
  int busy = 0;        // ranks that read: every rank, bcast's non-roots, reduce's root
  // Peer flag lines waited on: in turn by one rank (longest), and by all
  // ranks together (total: a reader waits on its owners' line 0, an owner
  // on its readers' line 2, an allreduce's reader on line 1 besides).
  WaitsOnOthers waits;
  double placed = 0;   // bytes this rank copies from its input to its output (an allgather's own block)
};

PeerReadLoad peer_read_load(Collective collective, int ranks, double m) {
  const double others = ranks - 1;
  const auto chunks = [](double bytes) { return std::max(1.0, std::ceil(bytes / kPeerReadChunkBytes)); };
  switch (collective) {
    case Collective::allreduce: {
      const double slice = m / ranks;  // fold slice r from every rank, then read every final slice
      return {2 * others * slice, 2 * others * slice, others * slice, others * (chunks(slice) + 1), ranks,
              {3, 3 * ranks}};
    }
    case Collective::reduce_scatter:
      return {others * m, others * m, others * m, others * chunks(m), ranks, {2, 2 * ranks}};
    case Collective::allgather: return {others * m, others * m, 0, others, ranks, {2, 2 * ranks}, m};
    case Collective::bcast: return {m, others * m, 0, 1, ranks - 1, {2, ranks}};
    case Collective::reduce: return {others * m, m, others * m, others * chunks(m), 1, {2, ranks}};
  }
  return {};
}

}  // namespace

double predict_peer_reads(Collective collective, int ranks, std::size_t count, std::size_t elem_bytes,
                          const LevelCosts& costs, bool mapped) {
  if (ranks <= 1) return costs.per_call;
  const std::size_t buffer_bytes = rank_buffer_bytes(collective, ranks, count, elem_bytes);
  const CostModel model = costs.model_for(buffer_bytes, ranks);
  const PeerReadLoad load = peer_read_load(collective, ranks, static_cast<double>(count * elem_bytes));
  double work = 0;
  if (mapped) {
    const double copied = std::max(0.0, std::max(load.read, load.served) - load.reduced);
    work = copied * model.copy_cost() + load.reduced * model.reduce_cost(true);
  } else {
    const bool memory_rate = costs.past_caches(buffer_bytes, ranks) && costs.memory.peer_read > 0;
    const double per_byte = memory_rate ? costs.memory.peer_read : costs.peer_read;
    work = std::max(load.read, load.served) * per_byte + load.reduced * model.gamma + load.calls * costs.read_call;
  }
  work += load.placed * model.copy_cost();
  return costs.per_call + load.waits.longest * costs.line_wait + in_turns(costs, ranks, work, load.busy, load.waits);
}

namespace {

// Whether a call runs on the inline lines where the level has them.
bool fits_inline_lines(Collective collective, int ranks, std::size_t count, std::size_t elem_bytes) {
  return ranks > 1 && inline_published(collective, ranks, count * elem_bytes) <= kInlineLinesBytes;
}

// What one inline call asks of its slowest rank (inline_collective.hpp's
// table; m bytes per rank's vector, or per block): the line transfers it
// takes part in, the lines it takes from its peers and those its peers take
// from it (both pass through its core's cache: at P = 2 a line costs an
// allreduce, where each rank does both, about twice what it costs a bcast's
// reader; docs/algorithms.md, "The inline lines"), and the bytes it folds.
struct InlineLoad {
  double lines = 0;
  double reduced = 0;
  int busy = 0;         // ranks that read: every rank, bcast's non-roots, reduce's root
  WaitsOnOthers waits;  // each reader waits once for its peers' lines
};

InlineLoad inline_load(Collective collective, int ranks, std::size_t m) {
  const double others = ranks - 1;
  const auto lines = static_cast<double>(inline_lines_read(inline_published(collective, ranks, m), m));
  const double folded = others * static_cast<double>(m);
  switch (collective) {
    // every rank reads and is read
    case Collective::allreduce:
    case Collective::reduce_scatter: return {2 * others * lines, folded, ranks, {1, ranks}};
    case Collective::allgather: return {2 * others * lines, 0, ranks, {1, ranks}};
    // the root reads, a non-root is read once
    case Collective::reduce: return {others * lines, folded, 1, {1, 1}};
    // the root is read, a non-root reads once
    case Collective::bcast: return {others * lines, 0, ranks - 1, {1, ranks - 1}};
  }
  return {};
}

}  // namespace

double predict_inline_lines(Collective collective, int ranks, std::size_t count, std::size_t elem_bytes,
                            const LevelCosts& costs) {
  if (ranks <= 1) return costs.inline_call;
  const InlineLoad load = inline_load(collective, ranks, count * elem_bytes);
  const double work = load.lines * costs.inline_line + load.reduced * costs.model.gamma;
  return costs.inline_call + in_turns(costs, ranks, work, load.busy, load.waits);
}

double predict_entry(Collective collective, const Algorithm& algorithm, int ranks, std::size_t count,
                     std::size_t elem_bytes, const LevelCosts& costs, DirectPaths paths, std::size_t segment_elems) {
  if (algorithm.executor == Executor::peer_reads)
    return predict_peer_reads(collective, ranks, count, elem_bytes, costs, paths.peers_mapped);
  if (algorithm.executor == Executor::inline_lines && paths.inline_lines &&
      fits_inline_lines(collective, ranks, count, elem_bytes))
    return predict_inline_lines(collective, ranks, count, elem_bytes, costs);
  return predict(algorithm, ranks, count, elem_bytes, costs, segment_elems) + board_cost(algorithm, costs);
}

double board_cost(const Algorithm& algorithm, const LevelCosts& costs) {
  switch (algorithm.arrival) {
    case ArrivalOrder::none: return 0;
    case ArrivalOrder::ticket: return costs.ticket;
    case ArrivalOrder::estimated:
    case ArrivalOrder::chosen: return costs.ticket + costs.decision;
  }
  return 0;
}

std::vector<std::size_t> segment_candidates(const Algorithm& algorithm, std::size_t buffer_bytes) {
  std::vector<std::size_t> candidates;
  if (!algorithm.pipelined) return candidates;
  for (std::size_t segment = 16 * 1024; segment <= buffer_bytes / 2; segment *= 4)
    if (segment != algorithm.default_segment_bytes && buffer_bytes / segment <= kMostSegments)
      candidates.push_back(segment);
  return candidates;
}

namespace {

// `algorithm`'s prediction at its default segment and at each of
// segment_candidates: the fastest (the default on ties).
Prediction fastest_segment(Collective collective, const Algorithm& algorithm, int ranks, std::size_t count,
                           std::size_t elem_bytes, const LevelCosts& costs, DirectPaths paths) {
  Prediction best{algorithm.name, predict_entry(collective, algorithm, ranks, count, elem_bytes, costs, paths)};
  if (algorithm.executor != Executor::steps) return best;
  for (std::size_t segment : segment_candidates(algorithm, rank_buffer_bytes(collective, ranks, count, elem_bytes))) {
    const double seconds =
        predict_entry(collective, algorithm, ranks, count, elem_bytes, costs, paths, segment / elem_bytes);
    if (seconds < best.seconds) best = {algorithm.name, seconds, segment};
  }
  return best;
}

}  // namespace

std::vector<Prediction> predict_all(Collective collective, int ranks, std::size_t count, std::size_t elem_bytes,
                                    bool commutative, const LevelCosts& costs, DirectPaths paths) {
  // Where the lines run the entry they must have been measured; elsewhere
  // its schedule runs, priced like any other.
  const bool on_lines = paths.inline_lines && fits_inline_lines(collective, ranks, count, elem_bytes);
  const bool inline_candidate = !on_lines || costs.inline_call > 0;
  const auto candidate = [&](const Algorithm& a) {
    if (a.arrival != ArrivalOrder::none || (a.needs_commutative && !commutative)) return false;
    switch (a.executor) {
      case Executor::steps: return true;
      case Executor::peer_reads: return paths.peer_reads && costs.peer_read > 0;
      case Executor::inline_lines: return inline_candidate;
    }
    return false;
  };
  std::vector<Prediction> predictions;
  for (const Algorithm& a : algorithms(collective))
    if (candidate(a))
      predictions.push_back(fastest_segment(collective, a, ranks, count, elem_bytes, costs, paths));
  std::stable_sort(predictions.begin(), predictions.end(),
                   [](const Prediction& x, const Prediction& y) { return x.seconds < y.seconds; });
  return predictions;
}

}  // namespace earlybird::coll
