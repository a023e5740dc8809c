#include "algorithm_choice.hpp"

#include <initializer_list>

namespace earlybird::config {
namespace {

using coll::Collective;

// The first of `preferred` that exists and suits the operator; otherwise the
// first algorithm of the collective that suits it.
std::string first_suitable(Collective collective, std::initializer_list<const char*> preferred, bool commutative) {
  auto suits = [&](const coll::Algorithm* a) {
    return a && a->arrival == coll::ArrivalOrder::none && (commutative || !a->needs_commutative);
  };
  for (const char* name : preferred)
    if (suits(coll::find_algorithm(collective, name))) return name;
  for (const auto& a : coll::algorithms(collective))
    if (suits(&a)) return std::string(a.name);
  return "";
}

}  // namespace

// Few rounds for small vectors, bandwidth-optimal algorithms for large ones
// (docs/benchmarks.md: P = 2 and 4 on one node); the inline lines for tiny
// calls where every window is directly reachable.
std::string default_algorithm(Collective collective, std::size_t bytes, int ranks, bool commutative, bool direct) {
  const bool small = bytes <= 32 * 1024;
  // What one rank publishes on the inline lines: reduce-scatter its P blocks.
  const std::size_t published = collective == Collective::reduce_scatter ? bytes * static_cast<std::size_t>(ranks) : bytes;
  if (direct && ranks > 1 && published <= kInlineFlagsBytes) return first_suitable(collective, {"inline_flags"}, commutative);
  switch (collective) {
    case Collective::allreduce:
      if (ranks <= 2) return first_suitable(collective, {small ? "recursive_doubling" : "ring", "rabenseifner"}, commutative);
      if (small) return first_suitable(collective, {"recursive_doubling", "binomial"}, commutative);
      return first_suitable(collective, {bytes <= 4 * 1024 * 1024 ? "rabenseifner" : "ring", "rabenseifner"},
                            commutative);
    case Collective::reduce: return first_suitable(collective, {small ? "binary_tree" : "chain"}, commutative);
    case Collective::bcast: return first_suitable(collective, {"binary_tree"}, true);
    case Collective::allgather: return first_suitable(collective, {small ? "recursive_doubling" : "ring"}, true);
    case Collective::reduce_scatter:
      return first_suitable(collective, {small ? "recursive_halving" : "ring"}, commutative);
  }
  return "";
}

}  // namespace earlybird::config
