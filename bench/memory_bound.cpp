#include "memory_bound.hpp"

namespace earlybird::bench {

double allreduce_memory_bound_s(const MemoryRates& rates, std::size_t bytes, int ranks) {
  if (ranks <= 1 || rates.copy_s_per_byte <= 0 || rates.reduce_s_per_byte <= 0) return 0;
  const double others = static_cast<double>(ranks - 1) / ranks * static_cast<double>(bytes);
  return others * (rates.reduce_s_per_byte + rates.copy_s_per_byte);
}

}  // namespace earlybird::bench
