// The bcast catalogue: names, properties and adapters to a common signature.
#include <earlybird/collectives/bcast.hpp>

#include <array>

namespace earlybird::coll {
namespace {

constexpr std::size_t kPipelinedDefaultBytes = 512 * 1024;  // as the reduce trees (not swept separately)

const std::array kBcast{
    Algorithm{"binomial", false, false, 0,
              [](int p, std::size_t n, const AlgorithmParams&, std::size_t) { return bcast_binomial(p, n); }},
    Algorithm{"chain", false, true, kPipelinedDefaultBytes,
              [](int p, std::size_t n, const AlgorithmParams& params, std::size_t elem) {
                return bcast_chain(p, n, segment_elems(params, kPipelinedDefaultBytes, elem));
              }},
    Algorithm{"binary_tree", false, true, kPipelinedDefaultBytes,
              [](int p, std::size_t n, const AlgorithmParams& params, std::size_t elem) {
                return bcast_binary_tree(p, n, segment_elems(params, kPipelinedDefaultBytes, elem));
              }},
    // For communicators spanning nodes (params.node_ranks); elsewhere the binomial tree.
    Algorithm{"hierarchical", false, true, kPipelinedDefaultBytes,
              [](int p, std::size_t n, const AlgorithmParams& params, std::size_t elem) {
                return bcast_hierarchical(p, n, params.node_ranks, segment_elems(params, kPipelinedDefaultBytes, elem));
              }},
    Algorithm{"scatter_allgather", false, false, 0,
              [](int p, std::size_t n, const AlgorithmParams& params, std::size_t) {
                return bcast_scatter_allgather(p, n, params.keep);
              },
              ArrivalOrder::none, Executor::steps,
              [](int p, std::size_t n, const AlgorithmParams&, std::size_t) {
                return bcast_scatter_allgather_bounds(p, n);
              }},
    Algorithm{"inline_flags", false, false, 0,
              [](int p, std::size_t n, const AlgorithmParams&, std::size_t) { return bcast_inline_flags(p, n); },
              ArrivalOrder::none, Executor::inline_lines},
    // Where every rank reads its peers' buffers directly (runtime/src/exec/peer_reads.hpp);
    // elsewhere inline_flags' schedule, which moves the same data.
    Algorithm{"peer_reads", false, false, 0, [](int p, std::size_t n, const AlgorithmParams&, std::size_t) { return bcast_inline_flags(p, n); }, ArrivalOrder::none, Executor::peer_reads},
};

}  // namespace

std::span<const Algorithm> bcast_catalogue() { return kBcast; }

}  // namespace earlybird::coll
