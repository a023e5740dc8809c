// eb-bench pap, inputs (pap_inputs.hpp).
#include "pap_inputs.hpp"

#include <algorithm>
#include <vector>

namespace earlybird::bench::pap {
namespace {

float small_integer(std::mt19937_64& engine) { return static_cast<float>(engine() >> 60); }

}  // namespace

std::mt19937_64 engine_for(std::uint64_t seed, std::initializer_list<std::uint64_t> stream) {
  std::vector<std::uint64_t> words = {seed};
  words.insert(words.end(), stream);
  std::seed_seq sequence(words.begin(), words.end());
  return std::mt19937_64(sequence);
}

Buffers make_pap_buffers(std::size_t count, int rank, int ranks) {
  return make_buffers(collective_spec("allreduce"), rank, ranks, count);
}

void refill(Buffers& d, std::uint64_t seed, std::uint64_t iteration_key, int rank, int ranks) {
  std::fill(d.reference.begin(), d.reference.end(), 0.0f);
  for (int r = 0; r < ranks; ++r) {
    std::mt19937_64 engine = engine_for(seed, {iteration_key, static_cast<std::uint64_t>(r)});
    for (std::size_t i = 0; i < d.input.size(); ++i) {
      const float v = small_integer(engine);
      d.reference[i] += v;
      if (r == rank) d.input[i] = v;
    }
  }
}

double half_phase_ms(Mode mode, double max_delay_ms, int rank, std::mt19937_64& delays) {
  const double base = (max_delay_ms + kBaseExtraMs) / 2;
  if (mode == Mode::one_late) return rank == 1 ? base + max_delay_ms : base;
  return base + std::uniform_real_distribution<double>(0.0, max_delay_ms)(delays) / 2;
}

std::uint64_t iteration_key(std::size_t mode, std::size_t size, std::size_t delay, int iteration) {
  return ((mode * 1'000 + size) * 1'000 + delay) * 100'000 + static_cast<std::uint64_t>(iteration);
}

}  // namespace earlybird::bench::pap
