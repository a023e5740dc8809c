// Allreduce schedule generators and the catalogue the runtime selects from.
// Each generator is a pure function; its file opens with cost, limitations and
// a state table for P = 4.
#pragma once

#include <earlybird/collectives/catalogue.hpp>
#include <earlybird/collectives/plan.hpp>
#include <earlybird/collectives/schedule.hpp>
#include <earlybird/collectives/simulate.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace earlybird::coll {

Schedule allreduce_ring(int ranks, std::size_t count);
Schedule allreduce_segmented_ring(int ranks, std::size_t count, std::size_t segment_elems);
// `keep`: generate only what touches these ranks' memory (Builder::keep_only,
// for per-rank plans: plan_for_rank in plan.hpp); empty: the whole schedule.
Schedule allreduce_recursive_doubling(int ranks, std::size_t count, const std::vector<int>& keep = {});
Schedule allreduce_recursive_doubling_halves(int ranks, std::size_t count);
Schedule allreduce_rabenseifner(int ranks, std::size_t count, const std::vector<int>& keep = {});
// One rank's plan of the ring and segmented ring, written directly in
// O(that rank's steps): equal to project(allreduce_ring(...), rank) with the
// exact maxima left 0 (plan_for_rank puts the bounds there).
RankPlan allreduce_ring_plan(int ranks, std::size_t count, int rank);
RankPlan allreduce_segmented_ring_plan(int ranks, std::size_t count, std::size_t segment_elems, int rank);
// Upper bounds of the schedules' per-rank maxima (Algorithm::bounds), from
// the slots and rounds each generator's header describes.
PlanBounds allreduce_ring_bounds(int ranks, std::size_t count, std::size_t segment_elems);
PlanBounds allreduce_recursive_doubling_bounds(int ranks, std::size_t count);
PlanBounds allreduce_rabenseifner_bounds(int ranks, std::size_t count);
Schedule allreduce_linear(int ranks, std::size_t count);
// Every rank reads every rank's vector and folds them in rank order: one
// round, for small vectors on one node (inline_flags.cpp).
Schedule allreduce_inline_flags(int ranks, std::size_t count);
// segment_elems = 0: one segment.
Schedule allreduce_chain(int ranks, std::size_t count, std::size_t segment_elems);

// Arrival-pattern-aware (Proficz 2018; virtual rank id = the id-th rank to
// arrive; pap.hpp has the pre-steps). segment_elems = 0: one segment.
Schedule allreduce_sorted_linear_tree(int ranks, std::size_t count, std::size_t segment_elems);
// presteps: k by arrival position, empty = all zeros (the ring in arrival
// order); throws std::invalid_argument when not valid for `ranks`.
Schedule allreduce_pre_reduced_ring(int ranks, std::size_t count, std::span<const std::uint32_t> presteps);
// The greedy reduction among the first P-1 arrivals, the last one joining
// last, then a broadcast from it (arrival_greedy.cpp). segment_elems = 0: one
// segment.
Schedule allreduce_arrival_greedy(int ranks, std::size_t count, std::size_t segment_elems);

// Allreduce as a reduce to rank 0 followed by a broadcast of the result, each
// phase one of the reduce or bcast generators' (reduce_bcast.cpp).
enum class ReducePhase : std::uint8_t { binomial, chain, binary_tree, kary_tree, greedy };
enum class BcastPhase : std::uint8_t { binomial, chain, binary_tree, scatter_allgather };
struct ReduceBcast {
  ReducePhase reduce = ReducePhase::binomial;
  BcastPhase bcast = BcastPhase::binomial;
};
// params.segment_elems: the pipelined phases' segment (0: one segment);
// params.fanout: the k-ary tree's k (>= 1; its reduce phase throws otherwise).
Schedule allreduce_reduce_bcast(int ranks, std::size_t count, ReduceBcast phases, const AlgorithmParams& params);
Schedule allreduce_binomial(int ranks, std::size_t count);
Schedule allreduce_binary_tree(int ranks, std::size_t count, std::size_t segment_elems);

// SUARA (Nuriyev et al. 2023, seed 003): P = p_1 x p_2 x ... x p_L ranks as
// a grid; step k runs an allreduce in every group of p_k ranks that differ
// only in their k-th coordinate, each step with the catalogue algorithm the
// cost model predicts fastest (suara.cpp). suara_grid says what
// allreduce_suara builds; allreduce_suara_on builds a given grid.
struct SuaraStep {
  int size = 1;                // p_k
  std::string_view algorithm;  // a catalogue allreduce
};
struct SuaraGrid {
  std::vector<SuaraStep> steps;  // sizes multiply to P; none when P = 1
  double predicted_s = 0;        // under the model suara.cpp names
};
// The machine suara_grid predicts on unless told: seed 003's (alpha, beta, gamma).
inline constexpr CostModel kSuaraMachine{1.5e-6, 6.25e-11, 2e-10};
// The flat algorithms a step may run.
inline constexpr std::array<std::string_view, 5> kSuaraCandidates{"ring", "segmented_ring", "recursive_doubling",
                                                                  "rabenseifner", "binomial"};
// Steps above this many ranks do not consider the ring family and the
// binomial (suara.cpp).
inline constexpr int kSuaraLargestRingStep = 1024;
// The flat algorithms suara_grid simulates for a step of `ranks` ranks.
std::vector<std::string_view> suara_step_candidates(int ranks);
// Chosen once per (ranks, count, elem_bytes, model) in a process, then
// remembered (a rank's plan builds the schedule two or three times).
SuaraGrid suara_grid(int ranks, std::size_t count, std::size_t elem_bytes, const CostModel& model = kSuaraMachine);
// `keep`: AlgorithmParams::keep (only the groups holding a kept rank are
// built, each step's schedule focused on them); empty: the whole schedule.
Schedule allreduce_suara(int ranks, std::size_t count, std::size_t elem_bytes, const std::vector<int>& keep = {});
Schedule allreduce_suara_on(const SuaraGrid& grid, int ranks, std::size_t count, std::size_t elem_bytes,
                            const std::vector<int>& keep = {});
// Upper bounds of the maxima (Algorithm::bounds): each step's bounds, added.
PlanBounds allreduce_suara_bounds(int ranks, std::size_t count, std::size_t elem_bytes);

// Across nodes of `node_ranks` consecutive ranks each: reduce-scatter in
// every node, allreduce of each chunk across the nodes, allgather in every
// node (hierarchical.cpp), pipelined in segments of at most segment_elems
// elements of each chunk (0: whole chunks). node_ranks = 0: one node (the
// ring); otherwise it must divide ranks (std::invalid_argument). `keep`: only
// the steps touching these ranks' memory (Builder::keep_only); empty: the
// whole schedule.
Schedule allreduce_hierarchical(int ranks, std::size_t count, int node_ranks, std::size_t segment_elems,
                                std::size_t elem_bytes, const std::vector<int>& keep = {});
// Upper bounds of its maxima (Algorithm::bounds): the node phases' ring
// slots and, per round of the network step, the most any group's schedule
// uses.
PlanBounds allreduce_hierarchical_bounds(int ranks, std::size_t count, int node_ranks, std::size_t segment_elems,
                                         std::size_t elem_bytes);

// The catalogue's allreduce table (catalogue.hpp has the general form).
inline std::span<const Algorithm> allreduce_algorithms() { return algorithms(Collective::allreduce); }
inline const Algorithm* find_allreduce(std::string_view name) { return find_algorithm(Collective::allreduce, name); }

}  // namespace earlybird::coll
