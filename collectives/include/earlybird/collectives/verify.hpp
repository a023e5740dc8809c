// Symbolic verifier: executes a schedule without data. Each slot element holds
// the set of virtual ranks whose contributions it carries and which input
// element it is (so data that lands at a wrong offset shows); steps run in a
// random topological order of the derived DAG (local and cross-rank edges).
//
// It reports, with the offending step:
//   - a cycle (steps left that can never become ready),
//   - double counting (a reduce whose operands share a contribution),
//   - a misaligned reduce (operands that hold different input elements),
//   - reading undefined data (a slot nothing wrote),
//   - a race (two conflicting accesses to one element not ordered by the DAG),
//   - an in-place hazard (input read after output of that range was written),
//   - a step the collective forbids (reduce: writing a non-root output;
//     bcast: reading a non-root input),
//   - with `ordered`, a reduce that does not combine adjacent rank intervals
//     in order,
//   - an output element that is undefined, misses or has extra contributions,
//     or holds the wrong input element (collective-specific, below).
#pragma once

#include <earlybird/collectives/catalogue.hpp>
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
  // For non-commutative operators: every reduce must combine contiguous rank
  // intervals in order, left = [a, b] and right = [b+1, c].
  bool ordered = false;
};

struct VerifyReport {
  bool ok = true;
  std::string error;  // empty when ok
  std::size_t steps_run = 0;
};

// Postconditions, root 0, element i of every output:
//   allreduce:      every rank: all ranks' element i, each exactly once
//   reduce:         rank 0: as allreduce; other ranks' outputs never written
//   bcast:          every rank: rank 0's element i (no other rank's input read)
//   allgather:      every rank, block j (elements j*n .. j*n+n-1): rank j's input
//   reduce_scatter: rank r: all ranks' element r*n + i of their inputs
// In place: input element x may be output element x (as the Builder models
// it) for every collective but allgather, whose in-place layout (MPI: rank r's
// input at block r) is not modelled; there input and output are kept apart.
VerifyReport verify(const Schedule& schedule, Collective collective, const VerifyOptions& options = {});
VerifyReport verify_allreduce(const Schedule& schedule, const VerifyOptions& options = {});

}  // namespace earlybird::coll
