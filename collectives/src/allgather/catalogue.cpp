// The allgather catalogue: names, properties and adapters to a common signature.
#include "../schedule/catalogue_adapters.hpp"

#include <earlybird/collectives/allgather.hpp>

#include <array>

namespace earlybird::coll {
namespace {

PlanBounds blockwise_bounds(int p, std::size_t n, const AlgorithmParams&, std::size_t) {
  return allgather_blockwise_bounds(p, n);
}

const std::array kAllgather{
    Algorithm{"ring", false, false, 0, detail::keeping<allgather_ring>, ArrivalOrder::none, Executor::steps,
              blockwise_bounds},
    Algorithm{"recursive_doubling", false, false, 0, detail::keeping<allgather_recursive_doubling>, ArrivalOrder::none,
              Executor::steps,
              [](int p, std::size_t n, const AlgorithmParams&, std::size_t) {
                return allgather_recursive_doubling_bounds(p, n);
              }},
    Algorithm{"bruck", false, false, 0, detail::keeping<allgather_bruck>, ArrivalOrder::none, Executor::steps,
              [](int p, std::size_t n, const AlgorithmParams&, std::size_t) { return allgather_bruck_bounds(p, n); }},
    // A ring per node position across the nodes, then rings inside each
    // node: for communicators spanning nodes (params.node_ranks).
    Algorithm{"hierarchical", false, false, 0,
              [](int p, std::size_t n, const AlgorithmParams& params, std::size_t) {
                return allgather_hierarchical(p, n, params.node_ranks, params.keep);
              },
              ArrivalOrder::none, Executor::steps, blockwise_bounds},
    Algorithm{"inline_flags", false, false, 0, detail::without_params<allgather_inline_flags>, ArrivalOrder::none,
              Executor::inline_lines},
    // Where every rank reads its peers' buffers directly (runtime/src/exec/peer_reads.hpp);
    // elsewhere inline_flags' schedule, which moves the same data.
    Algorithm{"peer_reads", false, false, 0, detail::without_params<allgather_inline_flags>, ArrivalOrder::none, Executor::peer_reads},
};

}  // namespace

std::span<const Algorithm> allgather_catalogue() { return kAllgather; }

}  // namespace earlybird::coll
