// Timing calls as eb-bench sweep times them, for the small bench programs
// that are not eb-bench (eb-flag-floor, eb-shape-switch): a barrier before
// each call, the slowest rank's time of each.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <vector>

namespace earlybird::bench {

// Median over `calls` calls (call(i) for i = 0 .. calls - 1), each after a
// barrier on MPI_COMM_WORLD, of the slowest rank's time, in microseconds.
inline double after_barrier_us(const std::function<void(int)>& call, int calls) {
  std::vector<double> times;
  for (int i = 0; i < calls; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    call(i);
    times.push_back(MPI_Wtime() - t0);
  }
  MPI_Allreduce(MPI_IN_PLACE, times.data(), calls, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  std::nth_element(times.begin(), times.begin() + calls / 2, times.end());
  return times[static_cast<std::size_t>(calls / 2)] * 1e6;
}

}  // namespace earlybird::bench
