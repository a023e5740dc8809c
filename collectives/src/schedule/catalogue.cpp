#include <earlybird/collectives/catalogue.hpp>

#include <algorithm>
#include <functional>
#include <stdexcept>

namespace earlybird::coll {

const char* to_string(Collective collective) {
  switch (collective) {
    case Collective::allreduce: return "allreduce";
    case Collective::reduce: return "reduce";
    case Collective::bcast: return "bcast";
    case Collective::allgather: return "allgather";
    case Collective::reduce_scatter: return "reduce_scatter";
  }
  return "?";
}

Shape shape_of(Collective collective, int ranks, std::size_t count) {
  const std::size_t all = static_cast<std::size_t>(ranks) * count;
  switch (collective) {
    case Collective::allgather: return {count, all};
    case Collective::reduce_scatter: return {all, count};
    case Collective::bcast: return {count, count, true};  // Communicator::bcast takes one buffer
    default: return {count, count};
  }
}

bool completion_implies_all_started(Collective collective) {
  return collective == Collective::allreduce || collective == Collective::allgather ||
         collective == Collective::reduce_scatter;
}

std::span<const Algorithm> algorithms(Collective collective) {
  switch (collective) {
    case Collective::allreduce: return allreduce_catalogue();
    case Collective::reduce: return reduce_catalogue();
    case Collective::bcast: return bcast_catalogue();
    case Collective::allgather: return allgather_catalogue();
    case Collective::reduce_scatter: return reduce_scatter_catalogue();
  }
  throw std::invalid_argument("algorithms: unknown collective");
}

const Algorithm* find_algorithm(Collective collective, std::string_view name) {
  const auto list = algorithms(collective);
  auto it = std::find_if(list.begin(), list.end(), [&](const Algorithm& a) { return a.name == name; });
  return it == list.end() ? nullptr : &*it;
}

Collective collective_of(const Algorithm& algorithm) {
  for (Collective collective : kCollectives) {
    const auto list = algorithms(collective);
    const std::less<const Algorithm*> before;
    if (!before(&algorithm, list.data()) && before(&algorithm, list.data() + list.size())) return collective;
  }
  throw std::invalid_argument("algorithm '" + std::string(algorithm.name) + "' is in no collective's catalogue");
}

std::string algorithm_names(Collective collective) {
  std::string names;
  for (const auto& a : algorithms(collective)) names += (names.empty() ? "" : ", ") + std::string(a.name);
  return names.empty() ? "(none yet)" : names;
}

std::size_t segment_elems(const AlgorithmParams& params, std::size_t default_bytes, std::size_t elem_bytes) {
  if (params.segment_elems) return params.segment_elems;
  return std::max<std::size_t>(1, default_bytes / std::max<std::size_t>(1, elem_bytes));
}

}  // namespace earlybird::coll
