// Internal: what one step costs under a CostModel (the rules simulate.hpp
// states), shared by the whole-schedule simulator and the one-rank
// symmetric one.
#pragma once

#include <earlybird/collectives/simulate.hpp>

namespace earlybird::coll::detail {

// Seconds for a step of `kind` moving or combining `bytes`; `within_node`:
// a transfer between two ranks of one node (two-level models only);
// `apart`: a reduction into a buffer that is neither operand.
inline double step_cost(StepKind kind, double bytes, bool within_node, bool apart, const CostModel& model) {
  switch (kind) {
    case StepKind::put:
    case StepKind::get:
      if (within_node) return model.per_step + model.node_alpha + model.node_beta * bytes;
      return model.per_step + model.alpha + model.beta * bytes;
    case StepKind::reduce: return model.per_step + model.reduce_cost(apart) * bytes;
    case StepKind::copy: return model.per_step + model.copy_cost() * bytes;
  }
  return 0;
}

// Whether a reduction dst = left op src writes a buffer apart from both
// operands (the same range of the same buffer is in place).
inline bool reduces_apart(Buffer dst, Range dst_range, Buffer left, Range left_range, Buffer src, Range src_range) {
  return !(dst == left && dst_range == left_range) && !(dst == src && dst_range == src_range);
}

}  // namespace earlybird::coll::detail
