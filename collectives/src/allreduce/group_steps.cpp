#include "group_steps.hpp"

#include <earlybird/collectives/allreduce.hpp>

#include <limits>

namespace earlybird::coll::detail {
namespace {

Slot placed(Slot slot, const std::vector<int>& group, Buffer input_as, std::size_t offset) {
  slot.rank = group[static_cast<std::size_t>(slot.rank)];
  if (slot.buffer == Buffer::input) slot.buffer = input_as;
  if (slot.buffer != Buffer::scratch) slot.range.begin += offset;
  return slot;
}

}  // namespace

void append_on_group(Builder& b, const Schedule& sub, const std::vector<int>& group, Buffer input_as,
                     std::size_t offset) {
  auto at = [&](const Slot& slot) { return placed(slot, group, input_as, offset); };
  for (const Step& step : sub.steps()) {
    const Slot src = at(step.src);
    const Slot dst = at(step.dst);
    switch (step.kind) {
      case StepKind::put: b.put(src, dst); break;
      case StepKind::get: b.get(src, dst); break;
      case StepKind::reduce: b.reduce(dst, at(step.left), src); break;
      case StepKind::copy:
        if (src.buffer != dst.buffer || src.range != dst.range) b.copy(dst, src);
        break;
    }
  }
}

GroupAlgorithm fastest_group_algorithm(int ranks, std::size_t count, std::size_t elem_bytes, const CostModel& model) {
  if (ranks == 1) return {};
  GroupAlgorithm best{{}, std::numeric_limits<double>::max()};
  for (std::string_view name : suara_step_candidates(ranks)) {
    const Schedule s = find_allreduce(name)->make(ranks, count, AlgorithmParams{}, elem_bytes);
    const double t = simulate(s, elem_bytes, model).time;
    if (t < best.predicted_s) best = {name, t};
  }
  return best;
}

}  // namespace earlybird::coll::detail
