// Internal: adapters from a generator's own signature to Algorithm::make, so
// a catalogue entry names its generator instead of spelling out a lambda.
#pragma once

#include <earlybird/collectives/catalogue.hpp>

#include <cstddef>
#include <vector>

namespace earlybird::coll::detail {

// A generator of (ranks, count) only: the parameters do not apply.
template <Schedule (*generate)(int, std::size_t)>
Schedule without_params(int ranks, std::size_t count, const AlgorithmParams&, std::size_t) {
  return generate(ranks, count);
}

// A pipelined generator of (ranks, count, segment_elems): params' segment, or
// `default_bytes` worth of elements.
template <Schedule (*generate)(int, std::size_t, std::size_t), std::size_t default_bytes>
Schedule with_segment(int ranks, std::size_t count, const AlgorithmParams& params, std::size_t elem_bytes) {
  return generate(ranks, count, segment_elems(params, default_bytes, elem_bytes));
}

// The same for generators that can build only part of the schedule
// (AlgorithmParams::keep).
template <Schedule (*generate)(int, std::size_t, const std::vector<int>&)>
Schedule keeping(int ranks, std::size_t count, const AlgorithmParams& params, std::size_t) {
  return generate(ranks, count, params.keep);
}

}  // namespace earlybird::coll::detail
