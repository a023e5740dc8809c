// The allreduce catalogue: names, properties and adapters to a common
// signature, so the runtime selects algorithms by name.
#include <earlybird/collectives/allreduce.hpp>

#include <algorithm>
#include <array>

namespace earlybird::coll {
namespace {

constexpr std::size_t kSegmentedRingDefaultBytes = 128 * 1024;  // docs/benchmarks.md, segment sweep
constexpr std::size_t kChainDefaultBytes = 128 * 1024;
constexpr std::size_t kReduceBcastDefaultBytes = 512 * 1024;  // the reduce and bcast phases' default

// A named reduce + bcast pair; pipelined phases get the catalogue's segment.
template <ReducePhase reduce, BcastPhase bcast>
Schedule reduce_then_bcast(int p, std::size_t n, const AlgorithmParams& params, std::size_t elem) {
  AlgorithmParams resolved = params;
  resolved.segment_elems = segment_elems(params, kReduceBcastDefaultBytes, elem);
  return allreduce_reduce_bcast(p, n, {reduce, bcast}, resolved);
}

const std::array kAllreduce{
    Algorithm{"ring", true, false, 0,
                       [](int p, std::size_t n, const AlgorithmParams&, std::size_t) {
                         return allreduce_ring(p, n);
                       }},
    Algorithm{"segmented_ring", true, true, kSegmentedRingDefaultBytes,
                       [](int p, std::size_t n, const AlgorithmParams& params, std::size_t elem) {
                         return allreduce_segmented_ring(
                             p, n, segment_elems(params, kSegmentedRingDefaultBytes, elem));
                       }},
    Algorithm{"recursive_doubling", true, false, 0,
                       [](int p, std::size_t n, const AlgorithmParams&, std::size_t) {
                         return allreduce_recursive_doubling(p, n);
                       }},
    Algorithm{"recursive_doubling_halves", false, false, 0,
                       [](int p, std::size_t n, const AlgorithmParams&, std::size_t) {
                         return allreduce_recursive_doubling_halves(p, n);
                       }},
    Algorithm{"rabenseifner", false, false, 0,
                       [](int p, std::size_t n, const AlgorithmParams&, std::size_t) {
                         return allreduce_rabenseifner(p, n);
                       }},
    Algorithm{"linear", false, false, 0,
                       [](int p, std::size_t n, const AlgorithmParams&, std::size_t) {
                         return allreduce_linear(p, n);
                       }},
    Algorithm{"chain", false, true, kChainDefaultBytes,
                       [](int p, std::size_t n, const AlgorithmParams& params, std::size_t elem) {
                         return allreduce_chain(p, n, segment_elems(params, kChainDefaultBytes, elem));
                       }},
    Algorithm{"binomial", false, false, 0,
                       [](int p, std::size_t n, const AlgorithmParams&, std::size_t) {
                         return allreduce_binomial(p, n);
                       }},
    Algorithm{"binary_tree", false, true, kReduceBcastDefaultBytes,
                       [](int p, std::size_t n, const AlgorithmParams& params, std::size_t elem) {
                         return allreduce_binary_tree(p, n, segment_elems(params, kReduceBcastDefaultBytes, elem));
                       }},
    Algorithm{"reduce_bcast", false, false, 0, reduce_then_bcast<ReducePhase::binomial, BcastPhase::binomial>},
    Algorithm{"chain_reduce_bcast", false, true, kReduceBcastDefaultBytes,
                       reduce_then_bcast<ReducePhase::chain, BcastPhase::chain>},
    Algorithm{"greedy_reduce_bcast", true, true, kReduceBcastDefaultBytes,
                       reduce_then_bcast<ReducePhase::greedy, BcastPhase::binary_tree>},
};

}  // namespace

std::span<const Algorithm> allreduce_catalogue() { return kAllreduce; }

}  // namespace earlybird::coll
