// Timing contenders at one size, shared by eb-bench sweep and calibrate:
// two untimed rounds (the first contender's result, the MPI library's,
// becomes the reference; a contender failing on any rank is left out), then
// every contender once per iteration in a fixed order, each result checked.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "collective_table.hpp"
#include "contenders.hpp"

namespace earlybird::bench {

// What one contender did at one size.
struct Outcome {
  Stats stats;
  long long wrong = 0;
  std::string error;  // non-empty: failed while warming up, not timed
  bool timed() const { return error.empty(); }
};

struct SizeResult {
  std::size_t bytes = 0;  // per rank: count x 4 (per block for allgather, reduce_scatter)
  int iterations = 0;
  std::vector<Outcome> outcomes;  // one per contender, same order
};

// How one sample is taken: every rank sleeps `idle_us` (0: not at all), then
// `calls` calls run in a row after one barrier, timed together.
struct Sampling {
  int calls = 1;
  int idle_us = 0;
};

// `contenders[0]` must be the MPI library's (the reference). Collective over
// MPI_COMM_WORLD; `budget` seconds per contender, idle time left out. A
// sample's time is divided by its number of calls; the result checked is the
// last call's. `form`: every call's root and whether in place.
SizeResult measure_size(const CollectiveSpec& spec, const std::vector<Contender>& contenders, std::size_t count,
                        double budget, int rank, int ranks, Sampling sampling = {}, CallForm form = {});

}  // namespace earlybird::bench
