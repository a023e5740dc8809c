// The allgather catalogue: names, properties and adapters to a common signature.
#include "../schedule/catalogue_adapters.hpp"

#include <earlybird/collectives/allgather.hpp>

#include <array>

namespace earlybird::coll {
namespace {

const std::array kAllgather{
    Algorithm{"ring", false, false, 0, detail::without_params<allgather_ring>},
    Algorithm{"recursive_doubling", false, false, 0, detail::without_params<allgather_recursive_doubling>},
    Algorithm{"bruck", false, false, 0, detail::without_params<allgather_bruck>},
    Algorithm{"inline_flags", false, false, 0, detail::without_params<allgather_inline_flags>, ArrivalOrder::none,
              true},
};

}  // namespace

std::span<const Algorithm> allgather_catalogue() { return kAllgather; }

}  // namespace earlybird::coll
