// Symbolic verifier: executes a schedule without data. Each slot element holds
// the set of virtual ranks whose contributions it carries; steps run in a
// random topological order of the derived DAG (local and cross-rank edges).
//
// It reports, with the offending step:
//   - a cycle (steps left that can never become ready),
//   - double counting (a reduce whose operands share a contribution),
//   - reading undefined data (a slot nothing wrote),
//   - a race (two conflicting accesses to one element not ordered by the DAG),
//   - an in-place hazard (input read after output of that range was written),
//   - a missing contribution in the final output (collective-specific check).
#pragma once

#include <earlybird/collectives/schedule.hpp>

#include <cstdint>
#include <string>

namespace earlybird::coll {

struct VerifyOptions {
  std::uint64_t seed = 1;
  // Race detection asks the DAG whether each conflicting earlier access is an
  // ancestor; above this many steps it is skipped (contents are still checked
  // under the random order).
  std::size_t race_check_max_steps = 50000;
};

struct VerifyReport {
  bool ok = true;
  std::string error;  // empty when ok
  std::size_t steps_run = 0;
};

// Allreduce postcondition: every rank's output element holds every rank's
// contribution exactly once.
VerifyReport verify_allreduce(const Schedule& schedule, const VerifyOptions& options = {});

}  // namespace earlybird::coll
