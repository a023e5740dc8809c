// The allreduce catalogue: names, properties and adapters to a common
// signature, so the runtime selects algorithms by name.
#include <earlybird/collectives/allreduce.hpp>

#include <algorithm>
#include <array>

namespace earlybird::coll {
namespace {

constexpr std::size_t kSegmentedRingDefaultBytes = 64 * 1024;
constexpr std::size_t kChainDefaultBytes = 64 * 1024;

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
};

}  // namespace

std::span<const Algorithm> allreduce_catalogue() { return kAllreduce; }

}  // namespace earlybird::coll
