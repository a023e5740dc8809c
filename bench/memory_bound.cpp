#include "memory_bound.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

namespace earlybird::bench {
namespace {

constexpr int kRepetitions = 5;

// The best of kRepetitions of `work`, every rank starting together; the
// slowest rank's best.
template <class Work>
double best_seconds_of_slowest(Work work, MPI_Comm comm) {
  double best = 1e30;
  for (int k = 0; k < kRepetitions; ++k) {
    MPI_Barrier(comm);
    const double start = MPI_Wtime();
    work();
    best = std::min(best, MPI_Wtime() - start);
  }
  double slowest = 0;
  MPI_Allreduce(&best, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm);
  return slowest;
}

}  // namespace

MemoryRates measure_memory_rates(std::size_t bytes, MPI_Comm comm) {
  const std::size_t n = std::max<std::size_t>(1, bytes / sizeof(float));
  std::vector<float> a(n, 1.0f), b(n, 2.0f), c(n, 0.0f);
  const double copy_s = best_seconds_of_slowest([&] { std::memcpy(c.data(), a.data(), n * sizeof(float)); }, comm);
  const double reduce_s = best_seconds_of_slowest(
      [&] {
        for (std::size_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
      },
      comm);
  volatile float kept = c[n - 1];  // the results are used: the loops stay
  (void)kept;
  const double moved = static_cast<double>(n * sizeof(float));
  return {moved / copy_s, moved / reduce_s};
}

double allreduce_memory_bound_s(const MemoryRates& rates, std::size_t bytes, int ranks) {
  if (ranks <= 1 || rates.copy_bytes_per_s <= 0 || rates.reduce_bytes_per_s <= 0) return 0;
  const double others = static_cast<double>(ranks - 1) / ranks * static_cast<double>(bytes);
  return others / rates.reduce_bytes_per_s + others / rates.copy_bytes_per_s;
}

}  // namespace earlybird::bench
