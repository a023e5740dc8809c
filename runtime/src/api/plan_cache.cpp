#include "plan_cache.hpp"

#include "../base/shared_while_alive.hpp"
#include "../pap/arrival_policy.hpp"

#include <earlybird/error.hpp>

#include <algorithm>
#include <tuple>

namespace earlybird::detail {
namespace {

constexpr std::size_t kPlanCacheLimit = 256;

}  // namespace

std::shared_ptr<PlanCache> PlanCache::for_shape(int ranks, int node_ranks, const WindowLayout& layout) {
  using Shape = std::tuple<int, int, std::size_t, std::size_t>;
  const Shape shape{ranks, node_ranks, layout.flags_per_lane, layout.scratch_bytes};
  return shared_while_alive<PlanCache>(shape, [&] { return std::make_shared<PlanCache>(ranks, node_ranks, layout); });
}

std::shared_ptr<const coll::RankPlan> PlanCache::plan(const Key& key) {
  {
    std::lock_guard lock(mutex_);
    if (auto it = plans_.find(key); it != plans_.end()) return it->second;
  }
  const coll::Algorithm* info = coll::find_algorithm(key.collective, key.algorithm);
  coll::AlgorithmParams params;
  params.segment_elems = key.segment_elems;
  params.fanout = key.fanout;
  params.presteps = key.presteps;
  params.node_ranks = node_ranks_;
  auto plan = std::make_shared<const coll::RankPlan>(
      coll::plan_for_rank(*info, ranks_, key.count, params, key.elem_bytes, key.virtual_rank));
  std::lock_guard lock(mutex_);
  if (plans_.size() >= kPlanCacheLimit) plans_.clear();
  plans_.emplace(key, plan);
  return plan;
}

bool PlanCache::has(const Key& key) {
  std::lock_guard lock(mutex_);
  return plans_.contains(key);
}

bool PlanCache::fits(const coll::RankPlan& plan, std::size_t elem_bytes) const {
  return layout_.fits_lane(false, plan.max_scratch_elems * elem_bytes, plan.max_flags);
}

std::size_t PlanCache::batch_count(Key key) {
  const std::size_t count = key.count;
  std::size_t batches = 1;
  for (;;) {
    key.count = (count + batches - 1) / batches;
    const auto built = plan(key);
    if (fits(*built, key.elem_bytes)) return batches;
    if (key.count <= 1)
      throw Error("the window's scratch (" + std::to_string(layout_.scratch_bytes) + " bytes per lane) is too small: " +
                  key.algorithm + " needs " + std::to_string(built->max_scratch_elems * key.elem_bytes) +
                  " bytes for this call; raise EARLYBIRD_SCRATCH_BYTES");
    const double need = static_cast<double>(built->max_scratch_elems * key.elem_bytes) /
                        static_cast<double>(layout_.scratch_bytes);
    const double flags = static_cast<double>(built->max_flags) / static_cast<double>(layout_.flags_per_lane);
    const auto grow = static_cast<std::size_t>(static_cast<double>(batches) * std::max(need, flags) * 1.05) + 1;
    batches = std::max(batches + 1, grow);
  }
}

// Every candidate at its default parameters.
std::size_t PlanCache::arrival_batch_count(Key key, std::string_view balanced) {
  key.algorithm = "ring";
  std::size_t batches = batch_count(key);
  key.algorithm = std::string(balanced);
  batches = std::max(batches, batch_count(key));
  for (const coll::Algorithm& a : coll::algorithms(key.collective)) {
    if (!pap::arrival_ordered(a)) continue;
    key.algorithm = std::string(a.name);
    batches = std::max(batches, batch_count(key));
  }
  return batches;
}

}  // namespace earlybird::detail
