// The algorithm catalogue: every collective's algorithms by name, with the
// properties selection needs, behind one signature. Generators are written for
// root 0; the runtime binds virtual ranks so any root works.
#pragma once

#include <earlybird/collectives/schedule.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace earlybird::coll {

struct RankPlan;  // plan.hpp

enum class Collective : std::uint8_t { allreduce, reduce, bcast, allgather, reduce_scatter };
inline constexpr std::array kCollectives = {Collective::allreduce, Collective::reduce, Collective::bcast,
                                            Collective::allgather, Collective::reduce_scatter};
const char* to_string(Collective collective);
// Whether it applies an operator (allreduce, reduce, reduce_scatter).
constexpr bool reduces(Collective collective) {
  return collective == Collective::allreduce || collective == Collective::reduce ||
         collective == Collective::reduce_scatter;
}

// Buffer lengths of a collective of `count` elements (per rank, or per block
// for allgather and reduce-scatter) over `ranks` ranks.
//   allreduce, reduce, bcast: input = output = count
//   allgather:      input = count,         output = ranks x count
//   reduce_scatter: input = ranks x count, output = count
Shape shape_of(Collective collective, int ranks, std::size_t count);

// In-place calls (MPI_IN_PLACE's layout): rank `rank`'s input is its output
// from this element on. 0 where the input is at least as large as the output:
// allreduce, reduce and bcast (one buffer), reduce_scatter (the result lands
// at the start of the buffer that held the input). Block `rank` (rank x
// input_count) for an allgather. The verifier checks every schedule against
// it, so a call may pass such buffers without copying its input.
inline std::size_t input_in_output(Collective collective, int rank, std::size_t input_count) {
  return collective == Collective::allgather ? static_cast<std::size_t>(rank) * input_count : 0;
}

// Whether a rank's completion of this collective (with data) implies that every
// rank started it: true when every rank's result depends on every rank's input.
bool completion_implies_all_started(Collective collective);

// Parameters every generator accepts; an algorithm ignores what it has no use for.
struct AlgorithmParams {
  std::size_t segment_elems = 0;  // pipelining unit; 0: the algorithm's default
  int fanout = 0;                 // k of k-ary trees; 0: the algorithm's default
  // Pre-reduced ring: pre-steps k[id] by arrival position (id 0 = earliest),
  // ranks entries; empty: the algorithm's default.
  std::vector<std::uint32_t> presteps;
  // Ranks per node when the ranks lie on several nodes, each holding this
  // many consecutive virtual ranks; 0: not known, or one node. Only the
  // hierarchical entries (allreduce, reduce, bcast) use it.
  int node_ranks = 0;
  // Generators that honour it build only what touches these ranks' memory
  // (Builder::keep_only); plan_for_rank sets it. Empty: the whole schedule.
  std::vector<int> keep;
};

// Upper bounds, over all ranks, of what one rank's plan needs: scratch
// elements and flags (Schedule::max_scratch_elems, max_flag_count). A rank
// that plans only its own steps sizes its batches with these, so every rank
// cuts a call into the same batches without seeing the others' plans.
struct PlanBounds {
  std::size_t scratch_elems = 0;
  std::uint32_t flags = 0;
};

// How the runtime binds an algorithm's virtual ranks to ranks. Generators
// always write virtual ranks; arrival-ordered ones treat virtual rank `id` as
// the id-th rank to arrive. This field is the one source of truth for what an
// algorithm needs from the runtime's arrival machinery.
enum class ArrivalOrder : std::uint8_t {
  none,       // virtual rank = rank (rooted collectives: distance from the root)
  estimated,  // order of the arrival estimates published by edge()
  ticket,     // true order of arrival (arrival tickets taken on entry)
  chosen,     // the runtime picks, per call, one of the entries above that
              // suits the arrivals it sees (auto_pap); `make` is a stand-in
              // whose requirements cover every entry it may pick
};

// What runs an algorithm's calls on a rank. `steps` everywhere; the others
// only where the runtime reaches every rank's memory directly (one node, a
// shared window; simulated ranks), which run the schedule's meaning without
// its steps: elsewhere they run their schedule's steps.
enum class Executor : std::uint8_t {
  steps,         // the schedule's steps, through the transport
  inline_lines,  // data-carrying flag lines, small calls (allreduce/inline_flags.cpp)
  peer_reads,    // each rank copies what it needs straight out of its peers'
                 // user buffers (process_vm_readv; runtime/src/exec/peer_reads.hpp)
};

// The inline_lines executor's lines: each rank publishes on up to
// kInlineLines cache lines of kInlineLineBytes, a sequence word and then the
// data, contiguous (runtime/src/exec/inline_collective.hpp; the first 56
// bytes share the word's line). A call runs there when
// what one rank publishes fits kInlineLinesBytes, for every element size up
// to 8 bytes. `auto` decides by the model where they beat a schedule (8
// lines until 2026-11-27, 20 until 2026-11-28; a word in every line until
// 2026-12-02, docs/benchmarks.md).
constexpr std::size_t kInlineLines = 40;
constexpr std::size_t kInlineLineBytes = 64;
constexpr std::size_t kInlineLinesBytes = 2240;
// Where a rank's data starts in its lines: after the word.
constexpr std::size_t kInlinePayloadOffset = sizeof(std::uint64_t);
// The lines a reader takes of a peer that publishes `published_bytes`, to
// read `read_bytes` of them: from the word's line on when it reads all of
// them, else the word's line and the lines of its range (counted from a
// line's start: reduce-scatter's block r may straddle one more).
constexpr std::size_t inline_lines_read(std::size_t published_bytes, std::size_t read_bytes) {
  if (read_bytes >= published_bytes)
    return (kInlinePayloadOffset + read_bytes + kInlineLineBytes - 1) / kInlineLineBytes;
  return 1 + (read_bytes + kInlineLineBytes - 1) / kInlineLineBytes;
}
// What one rank publishes in `collective` of `amount` (bytes or elements)
// per rank, or per block for allgather and reduce-scatter: reduce-scatter
// publishes its P blocks.
constexpr std::size_t inline_published(Collective collective, int ranks, std::size_t amount) {
  return collective == Collective::reduce_scatter ? static_cast<std::size_t>(ranks) * amount : amount;
}
// The most bytes per rank (or per block) of `collective` over `ranks` ranks
// that fit the inline lines.
constexpr std::size_t inline_limit(Collective collective, int ranks) {
  return kInlineLinesBytes / inline_published(collective, ranks, 1);
}

// peer_reads folds a peer's part this many bytes at a time (one read system
// call each), so the fold's operand stays in cache.
constexpr std::size_t kPeerReadChunkBytes = 128 * 1024;

struct Algorithm {
  std::string_view name;
  bool needs_commutative;  // true: may combine contributions out of rank order
  bool pipelined;          // true: honours AlgorithmParams::segment_elems
  std::size_t default_segment_bytes;  // 0 when not pipelined
  Schedule (*make)(int ranks, std::size_t count, const AlgorithmParams& params, std::size_t elem_bytes);
  ArrivalOrder arrival = ArrivalOrder::none;
  Executor executor = Executor::steps;
  // Set where a rank can plan without the whole schedule, because `make`
  // honours AlgorithmParams::keep (plan_for_rank builds one rank's plan from
  // its neighbourhood) or the entry has `plan`; plan_for_rank then takes the
  // schedule-wide maxima from here. nullptr: plans are projected from the
  // whole schedule.
  PlanBounds (*bounds)(int ranks, std::size_t count, const AlgorithmParams& params, std::size_t elem_bytes) = nullptr;
  // Set where one rank's plan can be written directly, without the Builder
  // (needs `bounds`): plan_for_rank calls it in place of the neighbourhood's
  // builds. Its result equals the projection of `make`'s schedule, maxima
  // aside (the unit tests check it).
  RankPlan (*plan)(int ranks, std::size_t count, const AlgorithmParams& params, std::size_t elem_bytes,
                   int rank) = nullptr;
};

std::span<const Algorithm> algorithms(Collective collective);
// nullptr when `collective` has no algorithm of that name.
const Algorithm* find_algorithm(Collective collective, std::string_view name);
// The collective whose catalogue holds `algorithm` (an element of one of the
// spans algorithms() returns); throws std::invalid_argument otherwise.
Collective collective_of(const Algorithm& algorithm);
// The names of `collective`'s algorithms, comma-separated (for messages).
std::string algorithm_names(Collective collective);

// The segment length in elements: params.segment_elems, or default_bytes
// converted to elements (at least 1).
std::size_t segment_elems(const AlgorithmParams& params, std::size_t default_bytes, std::size_t elem_bytes);

// Per-collective tables (one file each, next to the generators).
std::span<const Algorithm> allreduce_catalogue();
std::span<const Algorithm> reduce_catalogue();
std::span<const Algorithm> bcast_catalogue();
std::span<const Algorithm> allgather_catalogue();
std::span<const Algorithm> reduce_scatter_catalogue();

}  // namespace earlybird::coll
