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

// Seconds per byte of a local reduction (b += a) and copy, measured apart.
struct LocalRates {
  double gamma = 0;        // b op= a
  double copy = 0;
  double gamma_apart = -1;  // c = a op b; < 0: gamma
};

// A second regime must earn its parameters (a second beta and where it
// starts): it is kept only where one beta leaves more than
// kOneRegimeTolerance RMS relative error over the large calls, and the split
// cuts that error to kSplitGain of it or less (on this VM at P = 2: 26 % ->
// 14 %).
constexpr double kOneRegimeTolerance = 0.05;
constexpr double kSplitGain = 2.0 / 3.0;

// Fits `costs` to the measured times over `ranks` ranks (node_ranks kept):
// - per_call, alpha, per_step from `small`: each time is per_call +
//   a·alpha + s·per_step + the bytes' cost (a and s the simulated time with
//   that parameter 1 and the others 0; the bytes at the current in-cache
//   beta and `in_cache` rates); least squares of the relative error, over
//   every subset of the three parameters, the best fit with none negative;
// - beta from `large`: what remains of each time against the simulated time
//   with beta = 1, least squares of the relative error through 0 — once over
//   all calls at the `in_memory` rates, and for every split of the calls by
//   bytes x ranks into a smaller part (in cache: `in_cache` rates) and a
//   larger one (`in_memory` rates), one beta each; the best split is kept
//   (costs.memory from the geometric middle of the two sizes around it) when
//   it passes kOneRegimeTolerance and kSplitGain, else one regime at the
//   `in_memory` rates
//   (costs.memory.from_bytes = 0);
// - the two fits alternate `rounds` times, each using the other's result
//   (the first latency fit sees the beta `costs` came with).
void fit_level(const std::vector<TimedAllreduce>& small, const std::vector<TimedAllreduce>& large, int ranks,
               const LocalRates& in_cache, const LocalRates& in_memory, LevelCosts& costs, int rounds = 3);

// costs.peer_read, costs.memory.peer_read (for the calls past the caches,
// costs.past_caches) and costs.read_call from `calls`, peer_reads
// allreduces (predict_peer_reads; every other parameter kept): least
// squares of the relative error over every subset of the three, the best
// fit with none negative (all 0 when none is). A rate no call measured is
// left 0 (memory.peer_read 0: the in-cache rate serves), except that with
// every call past the caches their rate becomes peer_read. Returns the
// fit's RMS relative error.
double fit_peer_reads(const std::vector<TimedAllreduce>& calls, int ranks, LevelCosts& costs);

// costs.inline_call and costs.inline_line from `calls`, inline_flags
// allreduces that fit the flag lines (predict_inline_lines; every other
// parameter kept): least squares of the relative error over both and each
// alone, the best fit with neither negative (both 0 when none is). Returns
// the fit's RMS relative error.
double fit_inline_lines(const std::vector<TimedAllreduce>& calls, int ranks, LevelCosts& costs);

// costs.line_wait from `calls`, peer_reads allreduces over buffers in the
// peers' shared arenas (predict_peer_reads with mapped; every other
// parameter kept, so per_call, copy and gamma_apart are fitted first): least
// squares of the relative error through 0 of what each call took beyond its
// prediction without waits, per wait; 0 where that is negative. Returns the
// fit's RMS relative error. Fitted before fit_peer_reads, whose calls wait
// on the same lines.
double fit_line_wait(const std::vector<TimedAllreduce>& calls, int ranks, LevelCosts& costs);

// One of the arrival board's costs, costs.*board (LevelCosts::ticket from
// ticket-bound entries, then LevelCosts::decision from decided ones), from
// `calls`, allreduces of such entries with every rank on time
// (predict_entry, which adds board_cost; every other parameter kept): least
// squares of the relative error through 0 of what each call took beyond its
// prediction without this cost, 0 where that is negative. Returns the fit's
// RMS relative error.
double fit_board_cost(const std::vector<TimedAllreduce>& calls, int ranks, LevelCosts& costs,
                      double LevelCosts::*board);

// Where `cores` CPUs serve `ranks` ranks (fewer cores than ranks): sets
// costs.cores to `cores` and fits costs.wake, the switch between ranks
// (LevelCosts, predict), every other parameter kept: the value in [0,
// kMaxWake] with the least root-mean-square of log(predicted / measured)
// over `calls`, found by a geometric scan (10 % apart) refined by a linear
// one around its best point. Returns that error.
constexpr double kMaxWake = 1e-3;
double fit_wake(const std::vector<TimedAllreduce>& calls, int ranks, int cores, LevelCosts& costs);

}  // namespace earlybird::coll
