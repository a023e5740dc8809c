// The step time tau of arrival-ordered algorithms: one ring step, i.e. one
// chunk of m / P bytes moved and reduced, tau = alpha + (m / P) (beta + gamma).
// beta and gamma are measured once per process at first use (a 1 MiB memcpy
// and a 1 MiB float sum, best of three: on one node a put is a copy); alpha is
// the per-message latency measured on this machine's shared-memory path
// (docs/benchmarks.md). EARLYBIRD_PAP_TAU_US fixes tau instead.
#pragma once

#include "arrival_policy.hpp"

#include <cstddef>

namespace earlybird::pap {

struct LinkCosts {
  double alpha_us = 5.0;
  double beta_us_per_byte = 0;
  double gamma_us_per_byte = 0;
};

const LinkCosts& measured_link_costs();
Timing timing_for(std::size_t bytes, int ranks);

}  // namespace earlybird::pap
