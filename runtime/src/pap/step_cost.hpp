// The step time tau of arrival-ordered algorithms: one ring step, i.e. one
// chunk of m / P bytes moved and reduced. Two measurements, the larger wins:
//  - the model tau = alpha + (m / P) (beta + gamma), beta and gamma measured
//    once per process at first use (a 1 MiB memcpy and a 1 MiB float sum,
//    best of three: on one node a put is a copy), alpha a fixed per-message
//    latency of the shared-memory path (docs/algorithms.md gives its source);
//  - the fastest allreduce of that size class seen on the communicator,
//    divided by a ring's 2 (P - 1) steps: what a step really costs,
//    including what the model leaves out (time-sharing of oversubscribed
//    cores, thread wake-ups; docs/algorithms.md quotes a machine where the
//    model was 10x short).
// EARLYBIRD_PAP_TAU_US fixes tau instead.
#pragma once

#include "arrival_policy.hpp"

#include <cstddef>
#include <map>
#include <mutex>
#include <optional>

namespace earlybird::pap {

struct LinkCosts {
  double alpha_us = 5.0;
  double beta_us_per_byte = 0;
  double gamma_us_per_byte = 0;
};

const LinkCosts& measured_link_costs();
// `fastest_allreduce_us`: the fastest allreduce of about `bytes` seen, if any.
Timing timing_for(std::size_t bytes, int ranks, std::optional<double> fastest_allreduce_us = std::nullopt);

// The fastest allreduce per size class (bytes rounded down to a power of
// two) on one communicator. Thread-safe.
class AllreduceHistory {
 public:
  void record(std::size_t bytes, double us);
  std::optional<double> fastest_us(std::size_t bytes) const;

 private:
  mutable std::mutex mutex_;
  std::map<int, double> fastest_;  // by bit width of bytes
};

}  // namespace earlybird::pap
