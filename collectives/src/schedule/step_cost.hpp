// Internal: what one step costs under a CostModel (the rules simulate.hpp
// states), shared by the whole-schedule simulator and the one-rank
// symmetric one.
#pragma once

#include <earlybird/collectives/simulate.hpp>

namespace earlybird::coll::detail {

// Seconds for a step of `kind` moving or combining `bytes`; `within_node`:
// a transfer between two ranks of one node (two-level models only).
inline double step_cost(StepKind kind, double bytes, bool within_node, const CostModel& model) {
  switch (kind) {
    case StepKind::put:
    case StepKind::get:
      if (within_node) return model.per_step + model.node_alpha + model.node_beta * bytes;
      return model.per_step + model.alpha + model.beta * bytes;
    case StepKind::reduce: return model.per_step + model.gamma * bytes;
    case StepKind::copy: return model.per_step + model.copy_cost() * bytes;
  }
  return 0;
}

}  // namespace earlybird::coll::detail
