#include "group_steps.hpp"
#include "../schedule/remembered.hpp"

#include <earlybird/collectives/allreduce.hpp>
#include <earlybird/collectives/plan.hpp>

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

std::vector<int> kept_members(const Builder& b, const std::vector<int>& group) {
  std::vector<int> kept;
  for (std::size_t k = 0; k < group.size(); ++k)
    if (b.keeps(group[k])) kept.push_back(static_cast<int>(k));
  if (kept.size() == group.size()) kept.clear();
  return kept;
}

bool predicted_from_one_rank(std::string_view name, int ranks, std::size_t count, const CostModel& model) {
  if (model.node_ranks > 0 || model.cores > 0 || ranks < 2) return false;
  const bool divides = count % static_cast<std::size_t>(ranks) == 0;
  const bool power_of_two = (ranks & (ranks - 1)) == 0;
  if (name == "ring" || name == "segmented_ring") return divides;
  if (name == "recursive_doubling") return power_of_two;
  if (name == "rabenseifner") return power_of_two && divides;
  return false;
}

namespace {

double one_rank_time(const Algorithm& algorithm, int ranks, std::size_t count, std::size_t elem_bytes,
                     const CostModel& model) {
  return simulate_symmetric(plan_for_rank(algorithm, ranks, count, AlgorithmParams{}, elem_bytes, 0), elem_bytes, model)
      .time;
}

}  // namespace

double predicted_group_step(std::string_view name, int ranks, std::size_t count, std::size_t elem_bytes,
                            const CostModel& model) {
  const Algorithm& algorithm = *find_allreduce(name);
  if (predicted_from_one_rank(name, ranks, count, model)) return one_rank_time(algorithm, ranks, count, elem_bytes, model);
  const auto p = static_cast<std::size_t>(ranks);
  if (ranks > kWholeSimulationRanks && predicted_from_one_rank(name, ranks, p, model)) {
    if (count <= p) return one_rank_time(algorithm, ranks, p, elem_bytes, model);
    const std::size_t below = count / p * p;
    const double low = one_rank_time(algorithm, ranks, below, elem_bytes, model);
    const double high = one_rank_time(algorithm, ranks, below + p, elem_bytes, model);
    return low + (high - low) * static_cast<double>(count - below) / static_cast<double>(p);
  }
  return simulate(algorithm.make(ranks, count, AlgorithmParams{}, elem_bytes), elem_bytes, model).time;
}

PlanBounds group_bounds(std::string_view name, int ranks, std::size_t count, std::size_t elem_bytes) {
  const Algorithm& algorithm = *find_allreduce(name);
  if (algorithm.bounds) return algorithm.bounds(ranks, count, AlgorithmParams{}, elem_bytes);
  const Schedule whole = algorithm.make(ranks, count, AlgorithmParams{}, elem_bytes);
  return {whole.max_scratch_elems(), whole.max_flag_count()};
}

GroupAlgorithm fastest_group_algorithm(int ranks, std::size_t count, std::size_t elem_bytes, const CostModel& model) {
  if (ranks == 1) return {};
  struct Key {
    int ranks;
    std::size_t count, elem_bytes;
    CostModel model;
    auto operator<=>(const Key&) const = default;
  };
  static Remembered<Key, GroupAlgorithm> chosen(std::size_t{1} << 12);
  return chosen.get({ranks, count, elem_bytes, model}, [&] {
    GroupAlgorithm best{{}, std::numeric_limits<double>::max()};
    for (std::string_view name : suara_step_candidates(ranks)) {
      const double t = predicted_group_step(name, ranks, count, elem_bytes, model);
      if (t < best.predicted_s) best = {name, t};
    }
    return best;
  });
}

}  // namespace earlybird::coll::detail
