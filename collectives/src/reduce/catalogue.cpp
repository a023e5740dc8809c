// The reduce catalogue: names, properties and adapters to a common signature.
#include <earlybird/collectives/catalogue.hpp>

namespace earlybird::coll {

std::span<const Algorithm> reduce_catalogue() { return {}; }

}  // namespace earlybird::coll
