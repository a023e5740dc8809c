// Fitting the cost model to measured allreduce times: the arithmetic of
// `eb-bench calibrate` (which measures the times), kept apart from MPI so it
// can be checked on times the model itself generates (docs/algorithms.md,
// "The cost model", Calibration).
#pragma once

#include <earlybird/collectives/predict.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace earlybird::coll {

// One measured allreduce of float32 elements: the catalogue algorithm, the
// bytes per rank and the median time in seconds.
struct TimedAllreduce {
  std::string algorithm;
  std::size_t bytes = 0;
  double seconds = 0;
};

// Fits `costs` to the measured times over `ranks` ranks; gamma and copy are
// taken as given (measured apart), node_ranks is kept.
// - per_call, alpha, per_step from `small`: each time is per_call +
//   a·alpha + s·per_step + the bytes' cost (a and s the simulated time with
//   that parameter 1 and the others 0; the bytes' cost at the current beta);
//   least squares of the relative error, over every subset of the three
//   parameters, the best fit with none negative;
// - beta from `large`: what remains of each time against the simulated time
//   with beta = 1, least squares of the relative error through 0;
// - the two fits alternate `rounds` times, each using the other's result
//   (the first latency fit sees the beta `costs` came with).
void fit_level(const std::vector<TimedAllreduce>& small, const std::vector<TimedAllreduce>& large, int ranks,
               LevelCosts& costs, int rounds = 3);

}  // namespace earlybird::coll
