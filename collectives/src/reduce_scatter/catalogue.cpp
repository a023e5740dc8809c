// The reduce_scatter catalogue: names, properties and adapters to a common signature.
#include <earlybird/collectives/catalogue.hpp>

namespace earlybird::coll {

std::span<const Algorithm> reduce_scatter_catalogue() { return {}; }

}  // namespace earlybird::coll
