// The reduce catalogue: names, properties and adapters to a common signature,
// so the runtime selects algorithms by name.
#include <earlybird/collectives/reduce.hpp>

#include <array>

namespace earlybird::coll {
namespace {

constexpr std::size_t kPipelineDefaultBytes = 512 * 1024;  // docs/benchmarks.md, segment sweep
constexpr int kDefaultFanout = 4;

std::size_t pipeline_segment(const AlgorithmParams& params, std::size_t elem_bytes) {
  return segment_elems(params, kPipelineDefaultBytes, elem_bytes);
}

const std::array kReduce{
    Algorithm{"binomial", false, false, 0,
              [](int p, std::size_t n, const AlgorithmParams&, std::size_t) { return reduce_binomial(p, n); }},
    Algorithm{"chain", false, true, kPipelineDefaultBytes,
              [](int p, std::size_t n, const AlgorithmParams& params, std::size_t elem) {
                return reduce_chain(p, n, pipeline_segment(params, elem));
              }},
    Algorithm{"binary_tree", false, true, kPipelineDefaultBytes,
              [](int p, std::size_t n, const AlgorithmParams& params, std::size_t elem) {
                return reduce_binary_tree(p, n, pipeline_segment(params, elem));
              }},
    Algorithm{"kary_tree", false, true, kPipelineDefaultBytes,
              [](int p, std::size_t n, const AlgorithmParams& params, std::size_t elem) {
                const int fanout = params.fanout > 0 ? params.fanout : kDefaultFanout;
                return reduce_kary_tree(p, n, fanout, pipeline_segment(params, elem));
              }},
    // For communicators spanning nodes (params.node_ranks); elsewhere the binomial tree.
    Algorithm{"hierarchical", false, true, kPipelineDefaultBytes,
              [](int p, std::size_t n, const AlgorithmParams& params, std::size_t elem) {
                return reduce_hierarchical(p, n, params.node_ranks, pipeline_segment(params, elem));
              }},
    Algorithm{"greedy", true, true, kPipelineDefaultBytes,
              [](int p, std::size_t n, const AlgorithmParams& params, std::size_t elem) {
                return reduce_greedy(p, n, pipeline_segment(params, elem));
              }},
    Algorithm{"inline_flags", false, false, 0,
              [](int p, std::size_t n, const AlgorithmParams&, std::size_t) { return reduce_inline_flags(p, n); },
              ArrivalOrder::none, Executor::inline_lines},
    // Where every rank reads its peers' buffers directly (runtime/src/exec/peer_reads.hpp);
    // elsewhere inline_flags' schedule, which moves the same data.
    Algorithm{"peer_reads", false, false, 0, [](int p, std::size_t n, const AlgorithmParams&, std::size_t) { return reduce_inline_flags(p, n); }, ArrivalOrder::none, Executor::peer_reads},
};

}  // namespace

std::span<const Algorithm> reduce_catalogue() { return kReduce; }

}  // namespace earlybird::coll
