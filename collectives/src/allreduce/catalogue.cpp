// The allreduce catalogue: names, properties and adapters to a common
// signature, so the runtime selects algorithms by name.
#include <earlybird/collectives/allreduce.hpp>

#include <algorithm>
#include <array>

namespace earlybird::coll {
namespace {

std::size_t segment_elems(const AlgorithmParams& params, std::size_t default_bytes,
                          std::size_t elem_bytes) {
  if (params.segment_elems) return params.segment_elems;
  return std::max<std::size_t>(1, default_bytes / std::max<std::size_t>(1, elem_bytes));
}

constexpr std::size_t kSegmentedRingDefaultBytes = 64 * 1024;

const std::array kAllreduce{
    AllreduceAlgorithm{"ring", true, false, 0,
                       [](int p, std::size_t n, const AlgorithmParams&, std::size_t) {
                         return allreduce_ring(p, n);
                       }},
    AllreduceAlgorithm{"segmented_ring", true, true, kSegmentedRingDefaultBytes,
                       [](int p, std::size_t n, const AlgorithmParams& params, std::size_t elem) {
                         return allreduce_segmented_ring(
                             p, n, segment_elems(params, kSegmentedRingDefaultBytes, elem));
                       }},
    AllreduceAlgorithm{"recursive_doubling", true, false, 0,
                       [](int p, std::size_t n, const AlgorithmParams&, std::size_t) {
                         return allreduce_recursive_doubling(p, n);
                       }},
};

}  // namespace

std::span<const AllreduceAlgorithm> allreduce_algorithms() { return kAllreduce; }

const AllreduceAlgorithm* find_allreduce(std::string_view name) {
  auto it = std::find_if(kAllreduce.begin(), kAllreduce.end(),
                         [&](const AllreduceAlgorithm& a) { return a.name == name; });
  return it == kAllreduce.end() ? nullptr : &*it;
}

}  // namespace earlybird::coll
