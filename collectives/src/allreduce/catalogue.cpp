// The allreduce catalogue: names, properties and adapters to a common
// signature, so the runtime selects algorithms by name.
#include "../schedule/catalogue_adapters.hpp"

#include <earlybird/collectives/allreduce.hpp>
#include <earlybird/collectives/pap.hpp>

#include <algorithm>
#include <array>

namespace earlybird::coll {
namespace {

constexpr std::size_t kSegmentedRingDefaultBytes = 128 * 1024;  // docs/benchmarks.md, segment sweep
constexpr std::size_t kChainDefaultBytes = 128 * 1024;
constexpr std::size_t kReduceBcastDefaultBytes = 512 * 1024;  // the reduce and bcast phases' default
constexpr std::size_t kHierarchicalDefaultBytes = 256 * 1024;  // docs/benchmarks.md, hierarchical segments
constexpr std::size_t kSortedLinearTreeDefaultBytes = 128 * 1024;  // as chain (sorted_linear_tree.cpp)

// A named reduce + bcast pair; pipelined phases get the catalogue's segment.
Schedule sorted_linear_tree(int p, std::size_t n, const AlgorithmParams& params, std::size_t elem) {
  return allreduce_sorted_linear_tree(p, n, segment_elems(params, kSortedLinearTreeDefaultBytes, elem));
}

Schedule pre_reduced_ring(int p, std::size_t n, const AlgorithmParams& params, std::size_t) {
  return allreduce_pre_reduced_ring(p, n, params.presteps);
}

// Arrival tickets give no estimates to derive k from: take every pre-step,
// so nothing waits on the last rank to arrive (pap.hpp).
Schedule pre_reduced_ring_all_ahead(int p, std::size_t n, const AlgorithmParams& params, std::size_t) {
  if (!params.presteps.empty()) return allreduce_pre_reduced_ring(p, n, params.presteps);
  return allreduce_pre_reduced_ring(p, n, presteps_all_ahead(p));
}

Schedule suara(int p, std::size_t n, const AlgorithmParams& params, std::size_t elem) {
  return allreduce_suara(p, n, elem, params.keep);
}
PlanBounds suara_bounds(int p, std::size_t n, const AlgorithmParams&, std::size_t elem) {
  return allreduce_suara_bounds(p, n, elem);
}

Schedule hierarchical(int p, std::size_t n, const AlgorithmParams& params, std::size_t elem) {
  return allreduce_hierarchical(p, n, params.node_ranks, segment_elems(params, kHierarchicalDefaultBytes, elem), elem,
                                params.keep);
}
PlanBounds hierarchical_bounds(int p, std::size_t n, const AlgorithmParams& params, std::size_t elem) {
  return allreduce_hierarchical_bounds(p, n, params.node_ranks, segment_elems(params, kHierarchicalDefaultBytes, elem),
                                       elem);
}

PlanBounds ring_bounds(int p, std::size_t n, const AlgorithmParams&, std::size_t) {
  return allreduce_ring_bounds(p, n, 0);
}
PlanBounds segmented_ring_bounds(int p, std::size_t n, const AlgorithmParams& params, std::size_t elem) {
  return allreduce_ring_bounds(p, n, segment_elems(params, kSegmentedRingDefaultBytes, elem));
}
PlanBounds recursive_doubling_bounds(int p, std::size_t n, const AlgorithmParams&, std::size_t) {
  return allreduce_recursive_doubling_bounds(p, n);
}
PlanBounds rabenseifner_bounds(int p, std::size_t n, const AlgorithmParams&, std::size_t) {
  return allreduce_rabenseifner_bounds(p, n);
}

RankPlan ring_plan(int p, std::size_t n, const AlgorithmParams&, std::size_t, int rank) {
  return allreduce_ring_plan(p, n, rank);
}
RankPlan segmented_ring_plan(int p, std::size_t n, const AlgorithmParams& params, std::size_t elem, int rank) {
  return allreduce_segmented_ring_plan(p, n, segment_elems(params, kSegmentedRingDefaultBytes, elem), rank);
}

template <ReducePhase reduce, BcastPhase bcast>
Schedule reduce_then_bcast(int p, std::size_t n, const AlgorithmParams& params, std::size_t elem) {
  AlgorithmParams resolved = params;
  resolved.segment_elems = segment_elems(params, kReduceBcastDefaultBytes, elem);
  return allreduce_reduce_bcast(p, n, {reduce, bcast}, resolved);
}

const std::array kAllreduce{
    // Entries with bounds plan one rank from its neighbourhood, or write it
    // directly where they have `plan` (plan_for_rank).
    Algorithm{"ring", true, false, 0, detail::without_params<allreduce_ring>, ArrivalOrder::none, Executor::steps, ring_bounds,
              ring_plan},
    Algorithm{"segmented_ring", true, true, kSegmentedRingDefaultBytes,
              detail::with_segment<allreduce_segmented_ring, kSegmentedRingDefaultBytes>,
              ArrivalOrder::none, Executor::steps, segmented_ring_bounds, segmented_ring_plan},
    Algorithm{"recursive_doubling", true, false, 0, detail::keeping<allreduce_recursive_doubling>,
              ArrivalOrder::none, Executor::steps, recursive_doubling_bounds},
    Algorithm{"recursive_doubling_halves", false, false, 0,
              detail::without_params<allreduce_recursive_doubling_halves>},
    Algorithm{"rabenseifner", false, false, 0, detail::keeping<allreduce_rabenseifner>, ArrivalOrder::none, Executor::steps,
              rabenseifner_bounds},
    Algorithm{"linear", false, false, 0, detail::without_params<allreduce_linear>},
    Algorithm{"inline_flags", false, false, 0, detail::without_params<allreduce_inline_flags>, ArrivalOrder::none,
              Executor::inline_lines},
    // Where every rank reads its peers' buffers directly (runtime/src/exec/peer_reads.hpp);
    // elsewhere inline_flags' schedule, which moves the same data.
    Algorithm{"peer_reads", false, false, 0, detail::without_params<allreduce_inline_flags>, ArrivalOrder::none, Executor::peer_reads},
    Algorithm{"chain", false, true, kChainDefaultBytes, detail::with_segment<allreduce_chain, kChainDefaultBytes>},
    Algorithm{"binomial", false, false, 0, detail::without_params<allreduce_binomial>},
    Algorithm{"binary_tree", false, true, kReduceBcastDefaultBytes,
              detail::with_segment<allreduce_binary_tree, kReduceBcastDefaultBytes>},
    Algorithm{"reduce_bcast", false, false, 0, reduce_then_bcast<ReducePhase::binomial, BcastPhase::binomial>},
    Algorithm{"chain_reduce_bcast", false, true, kReduceBcastDefaultBytes,
              reduce_then_bcast<ReducePhase::chain, BcastPhase::chain>},
    Algorithm{"greedy_reduce_bcast", true, true, kReduceBcastDefaultBytes,
              reduce_then_bcast<ReducePhase::greedy, BcastPhase::binary_tree>},
    // A grid of two steps, each a catalogue algorithm chosen by the model.
    Algorithm{"suara", true, false, 0, suara, ArrivalOrder::none, Executor::steps, suara_bounds},
    // Node-level reduce-scatter, network allreduce of the chunks, node-level
    // allgather: for communicators spanning nodes (params.node_ranks).
    Algorithm{"hierarchical", true, true, kHierarchicalDefaultBytes, hierarchical, ArrivalOrder::none, Executor::steps,
              hierarchical_bounds},
    // Arrival-ordered: virtual rank id is the id-th rank to arrive, which is
    // not rank order, so all of them need a commutative operator.
    Algorithm{"sorted_linear_tree", true, true, kSortedLinearTreeDefaultBytes, sorted_linear_tree,
              ArrivalOrder::estimated},
    Algorithm{"pre_reduced_ring", true, false, 0, pre_reduced_ring, ArrivalOrder::estimated},
    Algorithm{"arrival_chain", true, true, kSortedLinearTreeDefaultBytes, sorted_linear_tree, ArrivalOrder::ticket},
    Algorithm{"arrival_prr", true, false, 0, pre_reduced_ring_all_ahead, ArrivalOrder::ticket},
    // The greedy's segment default (reduce catalogue); ticket-bound: id P-1
    // must be the rank that truly arrives last (arrival_greedy.cpp).
    Algorithm{"arrival_greedy", true, true, kReduceBcastDefaultBytes,
              detail::with_segment<allreduce_arrival_greedy, kReduceBcastDefaultBytes>, ArrivalOrder::ticket},
    // The runtime's per-call choice among ring and the entries above
    // (runtime/src/pap/arrival_policy.hpp); validated and planned before the
    // choice as pre_reduced_ring, whose requirements cover the others'.
    Algorithm{"auto_pap", true, true, kSortedLinearTreeDefaultBytes, pre_reduced_ring, ArrivalOrder::chosen},
};

}  // namespace

std::span<const Algorithm> allreduce_catalogue() { return kAllreduce; }

}  // namespace earlybird::coll
