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
  double peer_read = 0;   // seconds per byte read from a peer (LevelCosts::peer_read); 0: the in-cache rate
  double gamma_apart = 0; // seconds per byte reduced into a third buffer (CostModel::gamma_apart); 0: gamma
};

struct LevelCosts {
  LevelCosts() = default;
  LevelCosts(CostModel model_, double per_call_, MemoryRegime memory_ = {})
      : model(model_), per_call(per_call_), memory(memory_) {}

  CostModel model;
  double per_call = 0;  // seconds every collective costs once, whatever its schedule
  MemoryRegime memory;  // beta, gamma and copy of `model` are then the in-cache ones
  // Ranks reading each other's memory directly (the peer_reads entries,
  // where Transport::reads_peer_memory): peer_read seconds per byte read
  // (memory.peer_read past the caches), read_call seconds per read system
  // call (predict_peer_reads). peer_read 0: not measured here, and `auto`
  // leaves the peer_reads entries out.
  double peer_read = 0;
  double read_call = 0;
  // Each flag line a peer_reads call waits on in turn, once the peer has
  // stored it: the line crossing from the peer's core and the poll that sees
  // it (a load of shared memory, where a schedule's alpha is a put, its flush
  // and its flag). Fitted from peer_reads calls over shared buffers, where
  // nothing else but per_call and the bytes' rates is charged.
  double line_wait = 0;
  // Ranks loading each other's windows directly (the inline_flags entries
  // on their flag lines, for calls publishing up to kInlineLinesBytes):
  // inline_call seconds per call, inline_line seconds per line a rank takes
  // from a peer or a peer takes from it (predict_inline_lines). inline_call
  // 0: not measured here, and `auto` leaves the inline_flags entries out
  // where they would run on the lines.
  double inline_call = 0;
  double inline_line = 0;
  // The arrival-ordered entries (Algorithm::arrival): seconds each call
  // spends on the arrival board beyond its schedule (its ticket, its
  // arrival time, the ticket slots read until its peers' places are known:
  // operations on rank 0's window, round trips over the point-to-point
  // transport). predict_entry adds it.
  double ticket = 0;
  // The entries a published decision binds (arrival `estimated` and
  // `chosen`: the first rank to arrive decides and publishes, every other
  // rank reads the decision from rank 0's board): seconds each call spends
  // on that beyond `ticket` (board_cost).
  double decision = 0;
  // Where a node's ranks share model.cores CPUs (shares_cores): each time a
  // rank is woken for a peer's data costs `wake` (the switch from one rank
  // to another: the kernel's scheduling, the caches refilled).
  double wake = 0;
  bool shares_cores(int ranks) const { return model.cores > 0 && ranks > model.cores; }
  // Whether a collective whose ranks each hold `bytes` (the largest buffer:
  // an allgather's output, a reduce-scatter's input, else the vector) over
  // `ranks` ranks is past the caches: bytes x ranks reach memory.from_bytes
  // (> 0).
  bool past_caches(std::size_t bytes, int ranks) const;
  // The model for such a collective: `model` with the memory regime's rates
  // where it is past the caches.
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
// alpha, beta, gamma, copy, per_step, per_call, wake (LevelCosts: used where
// a node's ranks outnumber its cores), memory_from (bytes),
// memory_beta, memory_gamma, memory_copy; seconds and seconds per byte;
// peer_read, memory_peer_read (seconds per byte), read_call, line_wait, inline_call,
// inline_line and ticket (seconds)),
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

// Counts up to this many elements are simulated; larger ones as their copy
// shrunk to this many (the same steps, a pipeline's segments and every
// latency shrunk alike), the time scaled back (predict).
constexpr std::size_t kSimulatedCount = std::size_t{1} << 20;

// The model's time for `algorithm` over `ranks` ranks and `count` elements
// of `elem_bytes` bytes (AlgorithmParams::node_ranks = costs.model.node_ranks,
// the rest defaults): the simulated schedule's time under
// costs.model_for(the largest buffer a rank holds, ranks) plus per_call; above
// kSimulatedCount, the time at kSimulatedCount (under the same model) times
// count / kSimulatedCount, plus per_call. (A line through the times at
// kSimulatedCount / 2 and kSimulatedCount put a 16 MiB segmented ring at P =
// 16 at 0.6 of its whole simulation: at 2 MiB its pipeline had not begun.)
// Ranks sharing cores (costs.shares_cores): the simulation with the ranks
// taking turns on the cores, plus per_call, plus a wake per wait on another
// rank (waits_on_other_ranks): the cores serve the waits model.cores at a
// time, and never fewer than the longest chain of them.
// `segment_elems`: AlgorithmParams::segment_elems (0: the entry's default).
double predict(const Algorithm& algorithm, int ranks, std::size_t count, std::size_t elem_bytes,
               const LevelCosts& costs, std::size_t segment_elems = 0);

// The time of a peer_reads call (runtime/src/exec/peer_reads.hpp), which has
// no schedule: per_call, line_wait for each wait on a peer's flag line in
// turn (three for allreduce, two otherwise), and each
// rank's bytes read at peer_read (memory.peer_read past the caches, where
// given), reduced at gamma, plus read_call per
// system call (folds read kPeerReadChunkBytes at a time). An owner's memory
// serves its readers one at a time, as a port (a bcast root's buffer is read
// P - 1 times): a rank's bytes count as the larger of what it reads and what
// is read from it. Ranks sharing cores (costs.shares_cores) take turns: the
// work grows by busy / model.cores where the ranks that read (every rank;
// bcast's P - 1 non-roots; reduce's root alone) outnumber the cores, and the
// waits on flag lines cost wakes as a schedule's do (the most of the longest
// chain and all ranks' waits over the cores).
// `mapped`: the peers' buffers are in their shared arenas (earlybird/
// shared_memory.hpp), so reads are loads, not system calls: the bytes
// folded cost a reduction into a third buffer (gamma_apart: the fold reads
// the peer's bytes itself), the rest a copy (the model's copy rate), and no
// read_call.
double predict_peer_reads(Collective collective, int ranks, std::size_t count, std::size_t elem_bytes,
                          const LevelCosts& costs, bool mapped = false);

// The time of an inline_flags call on the flag lines (runtime/src/exec/
// inline_collective.hpp), which has no schedule: inline_call (the caller
// runs it, and waits once for its peers' lines), plus each transfer of a
// line of 56 data bytes the slowest rank takes part in (a line it takes from
// a peer, or a peer takes from it) at inline_line, plus what it folds at
// gamma. A rank's own lines are in its cache. Ranks sharing cores
// (costs.shares_cores) take turns as for predict_peer_reads: each reading
// rank waits once for its peers' lines.
double predict_inline_lines(Collective collective, int ranks, std::size_t count, std::size_t elem_bytes,
                            const LevelCosts& costs);

// Which of a node's direct paths a communicator has, besides the schedule's
// steps: `inline_lines`, every rank's window loads and stores directly and
// the call fits the lines (the inline_flags entries run there);
// `peer_reads`, every rank reads its peers' memory (Transport::
// reads_peer_memory); `peers_mapped`, the call's buffers are in the peers'
// shared arenas besides (CollectiveOptions::shared_buffers; predict_peer_reads'
// `mapped`).
struct DirectPaths {
  bool inline_lines = false;
  bool peer_reads = false;
  bool peers_mapped = false;
};

// The model's time for `algorithm`, an entry of `collective`'s catalogue:
// predict_peer_reads for the peer_reads executor, predict_inline_lines for
// the inline one where `paths` has the lines and the call fits them, else
// predict (the entry's schedule, which is what runs without its path); an
// arrival-ordered entry also pays board_cost. `segment_elems` as for
// predict (schedules only).
double predict_entry(Collective collective, const Algorithm& algorithm, int ranks, std::size_t count,
                     std::size_t elem_bytes, const LevelCosts& costs, DirectPaths paths = {},
                     std::size_t segment_elems = 0);

// What `algorithm` spends on the arrival board beyond its schedule:
// costs.ticket for an arrival-ordered entry, plus costs.decision where a
// published decision binds it (arrival `estimated` and `chosen`); 0 for the
// rest.
double board_cost(const Algorithm& algorithm, const LevelCosts& costs);

struct Prediction {
  std::string_view algorithm;
  double seconds;
  std::size_t segment_bytes = 0;  // the segment `seconds` is for; 0: the entry's default
};

// The segments a pipelined entry is also priced with (besides its
// default): a ladder in powers of 4, each kept where it cuts a rank's
// largest buffer (`buffer_bytes`) into 2 to kMostSegments segments and is
// not the default. Empty for an entry that is not pipelined.
constexpr std::size_t kMostSegments = 64;
std::vector<std::size_t> segment_candidates(const Algorithm& algorithm, std::size_t buffer_bytes);

// Every algorithm of `collective` that `auto` may choose (not arrival-ordered,
// commutativity suiting the operator; the peer_reads entry where
// paths.peer_reads and costs.peer_read > 0; the inline_flags entry on the
// lines where paths.inline_lines and the call publishes at most
// kInlineLinesBytes, if costs.inline_call > 0, and elsewhere priced by its
// schedule like every entry), with its prediction, fastest first (ties:
// catalogue order). A pipelined entry appears once, with the fastest of its
// default segment and segment_candidates (the default on ties).
std::vector<Prediction> predict_all(Collective collective, int ranks, std::size_t count, std::size_t elem_bytes,
                                    bool commutative, const LevelCosts& costs, DirectPaths paths = {});

}  // namespace earlybird::coll
