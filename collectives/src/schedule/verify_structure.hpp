// Internal: the verifier's structural checks (verify.cpp runs them before the
// symbolic execution): buffer shapes, well-formed steps, the buffers a
// collective lets each rank touch, and dependencies that name real steps.
#pragma once

#include <earlybird/collectives/catalogue.hpp>
#include <earlybird/collectives/schedule.hpp>

#include <string>

namespace earlybird::coll::detail {

struct StructureReport {
  std::string problem;        // the first problem found; empty: none
  bool program_order = true;  // every dependency points backwards
};

StructureReport check_structure(const Schedule& schedule, Collective collective);

// A reduce whose left operand is not its destination: dst = left op src.
bool has_separate_left(const Step& step);

// "step 3 (put ...)", as the verifier's messages name steps.
std::string step_name(const Schedule& schedule, StepId id);

}  // namespace earlybird::coll::detail
