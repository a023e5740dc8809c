// The reduce_scatter catalogue: names, properties and adapters to a common signature.
#include "../schedule/catalogue_adapters.hpp"

#include <earlybird/collectives/reduce_scatter.hpp>

#include <array>

namespace earlybird::coll {
namespace {

PlanBounds blockwise_bounds(int p, std::size_t n, const AlgorithmParams&, std::size_t) {
  return reduce_scatter_blockwise_bounds(p, n);
}

const std::array kReduceScatter{
    Algorithm{"ring", true, false, 0, detail::keeping<reduce_scatter_ring>, ArrivalOrder::none, Executor::steps,
              blockwise_bounds},
    Algorithm{"recursive_halving", true, false, 0, detail::keeping<reduce_scatter_recursive_halving>,
              ArrivalOrder::none, Executor::steps,
              [](int p, std::size_t n, const AlgorithmParams&, std::size_t) {
                return reduce_scatter_recursive_halving_bounds(p, n);
              }},
    // Rings inside each node, then a ring per node position across the
    // nodes: for communicators spanning nodes (params.node_ranks).
    Algorithm{"hierarchical", true, false, 0,
              [](int p, std::size_t n, const AlgorithmParams& params, std::size_t) {
                return reduce_scatter_hierarchical(p, n, params.node_ranks, params.keep);
              },
              ArrivalOrder::none, Executor::steps, blockwise_bounds},
    Algorithm{"inline_flags", false, false, 0, detail::without_params<reduce_scatter_inline_flags>,
              ArrivalOrder::none, Executor::inline_lines},
    // Where every rank reads its peers' buffers directly (runtime/src/exec/peer_reads.hpp);
    // elsewhere inline_flags' schedule, which moves the same data.
    Algorithm{"peer_reads", false, false, 0, detail::without_params<reduce_scatter_inline_flags>, ArrivalOrder::none, Executor::peer_reads},
};

}  // namespace

std::span<const Algorithm> reduce_scatter_catalogue() { return kReduceScatter; }

}  // namespace earlybird::coll
