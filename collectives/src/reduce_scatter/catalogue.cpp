// The reduce_scatter catalogue: names, properties and adapters to a common signature.
#include <earlybird/collectives/reduce_scatter.hpp>

#include <array>

namespace earlybird::coll {
namespace {

const std::array kReduceScatter{
    Algorithm{"ring", true, false, 0,
              [](int p, std::size_t n, const AlgorithmParams&, std::size_t) { return reduce_scatter_ring(p, n); }},
    Algorithm{"recursive_halving", true, false, 0,
              [](int p, std::size_t n, const AlgorithmParams&, std::size_t) {
                return reduce_scatter_recursive_halving(p, n);
              }},
};

}  // namespace

std::span<const Algorithm> reduce_scatter_catalogue() { return kReduceScatter; }

}  // namespace earlybird::coll
