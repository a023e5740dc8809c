// The allgather catalogue: names, properties and adapters to a common signature.
#include <earlybird/collectives/allgather.hpp>

#include <array>

namespace earlybird::coll {
namespace {

const std::array kAllgather{
    Algorithm{"ring", false, false, 0,
              [](int p, std::size_t n, const AlgorithmParams&, std::size_t) { return allgather_ring(p, n); }},
    Algorithm{"recursive_doubling", false, false, 0,
              [](int p, std::size_t n, const AlgorithmParams&, std::size_t) {
                return allgather_recursive_doubling(p, n);
              }},
    Algorithm{"bruck", false, false, 0,
              [](int p, std::size_t n, const AlgorithmParams&, std::size_t) { return allgather_bruck(p, n); }},
};

}  // namespace

std::span<const Algorithm> allgather_catalogue() { return kAllgather; }

}  // namespace earlybird::coll
