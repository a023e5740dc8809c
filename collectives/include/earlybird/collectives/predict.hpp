// The cost model's predictions: how long a catalogue algorithm would take,
// from its schedule run by the schedule simulator (simulate.hpp), and the
// machine profile holding the model's parameters per level.
//
// Levels: `node` is a communicator whose every window the runtime can load
// and store directly (one node, shared window); `network` is any other (ranks
// on several nodes, or the point-to-point transport). `eb-bench calibrate`
// measures one level and writes a profile file; the runtime reads the file
// named by EARLYBIRD_PROFILE, else the defaults below (docs/algorithms.md,
// "The cost model").
#pragma once

#include <earlybird/collectives/catalogue.hpp>
#include <earlybird/collectives/simulate.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace earlybird::coll {

// Past the caches: rates for collectives whose data no longer fits in them.
struct MemoryRegime {
  double from_bytes = 0;  // bytes per rank x ranks from which these rates hold; 0: never
  double beta = 0;        // seconds per byte transferred
  double gamma = 0;       // seconds per byte reduced
  double copy = 0;        // seconds per byte copied
};

struct LevelCosts {
  LevelCosts() = default;
  LevelCosts(CostModel model_, double per_call_, MemoryRegime memory_ = {})
      : model(model_), per_call(per_call_), memory(memory_) {}

  CostModel model;
  double per_call = 0;  // seconds every collective costs once, whatever its schedule
  MemoryRegime memory;  // beta, gamma and copy of `model` are then the in-cache ones
  // The model for a collective of `bytes` per rank over `ranks` ranks: `model`
  // with the memory regime's rates where bytes x ranks reach its from_bytes.
  CostModel model_for(std::size_t bytes, int ranks) const;
};

struct MachineProfile {
  LevelCosts node;
  LevelCosts network;
  std::string source = "defaults";  // the file it was read from
};

// Measured on the project's 2-core VM (docs/benchmarks.md, "The cost model"):
// node from `eb-bench calibrate` at P = 2 on one node; network from the
// emulated hosts at 1 Gbit/s.
MachineProfile default_profile();

// The profile file: `level.key = value` lines (level: node, network; key:
// alpha, beta, gamma, copy, per_step, per_call, wake (CostModel: used where
// a node's ranks outnumber its cores), memory_from (bytes),
// memory_beta, memory_gamma, memory_copy; seconds and seconds per byte),
// '#' starts a comment; keys not given keep their defaults. Throws
// std::invalid_argument naming the file, the line and the problem.
MachineProfile read_profile(const std::string& path);
std::string format_profile(const MachineProfile& profile);
// A finite number >= 0 spelled out in full (the profile's values, eb-bench's
// numeric options); throws std::invalid_argument "'text' is not a
// non-negative number".
double parse_non_negative(const std::string& text);

// The costs of a communicator over nodes of `node_ranks` consecutive ranks:
// the network level, with transfers inside a node at the node level's alpha
// and beta (CostModel::node_ranks); the generators see node_ranks too
// (AlgorithmParams), so the hierarchical entries know the nodes.
LevelCosts spanning_nodes(const MachineProfile& profile, int node_ranks);

// Counts up to this many elements are simulated; larger ones extrapolated
// (a schedule's steps, and so the simulation's time, grow with the count for
// segmented algorithms, and every size past a few MiB is bandwidth-bound).
constexpr std::size_t kSimulatedCount = std::size_t{1} << 20;

// The model's time for `algorithm` over `ranks` ranks and `count` elements
// of `elem_bytes` bytes (AlgorithmParams::node_ranks = costs.model.node_ranks,
// the rest defaults): the simulated schedule's time under
// costs.model_for(count x elem_bytes, ranks) plus per_call; above
// kSimulatedCount, the line through the times at kSimulatedCount / 2 and
// kSimulatedCount (under the same model).
double predict(const Algorithm& algorithm, int ranks, std::size_t count, std::size_t elem_bytes,
               const LevelCosts& costs);

struct Prediction {
  std::string_view algorithm;
  double seconds;
};

// Every algorithm of `collective` that `auto` may choose (not arrival-ordered,
// not run on inline flag lines, commutativity suiting the operator), with its
// prediction, fastest first (ties: catalogue order).
std::vector<Prediction> predict_all(Collective collective, int ranks, std::size_t count, std::size_t elem_bytes,
                                    bool commutative, const LevelCosts& costs);

}  // namespace earlybird::coll
