// eb-bench pap, configuration: the arrival modes, the run's settings as the
// loops use them (pap.cpp), and the constants of the procedure.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "jobs.hpp"

namespace earlybird::bench::pap {

inline constexpr double kBaseExtraMs = 100.0;  // base = (maxDelay + 100 ms) / 2
inline constexpr const char* kRing = "ring";
inline constexpr const char* kMpi = "mpi";
inline const double kNotAvailable = std::numeric_limits<double>::quiet_NaN();

enum class Mode { one_late, rand_late };

const char* to_string(Mode mode);

// What --algorithms all stands for.
const std::vector<std::string>& all_algorithms();

struct PapConfig {
  std::vector<Mode> modes;
  std::vector<double> delays_ms;
  std::vector<std::size_t> counts;      // floats per rank (--sizes in bytes / 4)
  std::vector<std::string> algorithms;  // ring first
  int iterations = 5;
  int baseline_iterations = 21;
  std::uint64_t seed = 1;
  std::string csv;
  std::string command_line;
};

// The configuration of the parsed options; rank 0 says when it adds the ring.
PapConfig make_config(const PapOptions& options, int rank);

// The watchdog of every earlybird call: longer than the latest arrival can be.
std::chrono::milliseconds call_timeout(const std::vector<double>& delays_ms);

}  // namespace earlybird::bench::pap
