// Internal: the frame every generator shares: a Builder named after the
// algorithm with `collective`'s buffer shape (focused on `keep` where given:
// Builder::keep_only), the steps `append` records on it, the finished
// schedule.
#pragma once

#include <earlybird/collectives/builder.hpp>
#include <earlybird/collectives/catalogue.hpp>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace earlybird::coll::detail {

template <class Append>
Schedule build_schedule(std::string algorithm, Collective collective, int ranks, std::size_t count, Append append,
                        const std::vector<int>& keep = {}) {
  Builder b(std::move(algorithm), ranks, count, shape_of(collective, ranks, count));
  b.keep_only(keep);
  append(b);
  return std::move(b).finish();
}

}  // namespace earlybird::coll::detail
