#include <earlybird/collectives/plan.hpp>

#include <algorithm>
#include <stdexcept>

namespace earlybird::coll {
namespace {

constexpr std::uint32_t kNotLocal = ~std::uint32_t{0};

std::uint32_t flag_for(const Schedule& schedule, StepId source, int target) {
  for (const Notification& n : schedule.notifications(source))
    if (n.target == target) return n.flag;
  throw std::logic_error("project: cross-rank dependency without a notification");
}

}  // namespace

RankPlan project(const Schedule& schedule, int rank) {
  RankPlan plan;
  plan.algorithm = schedule.algorithm();
  plan.rank = rank;
  plan.ranks = schedule.ranks();
  plan.count = schedule.count();
  plan.shape = schedule.shape();
  plan.scratch_elems = schedule.scratch_elems(rank);
  plan.flags = schedule.flag_count(rank);
  plan.max_scratch_elems = schedule.max_scratch_elems();
  plan.max_flags = schedule.max_flag_count();

  const auto steps = schedule.steps();
  std::vector<std::uint32_t> local(steps.size(), kNotLocal);
  std::vector<std::vector<std::uint32_t>> succ;
  std::vector<std::vector<std::uint32_t>> by_flag(plan.flags);
  plan.flag_source.assign(plan.flags, -1);

  for (StepId g = 0; g < steps.size(); ++g) {
    const Step& s = steps[g];
    if (s.owner != rank) continue;
    const auto me = static_cast<std::uint32_t>(plan.steps.size());
    local[g] = me;
    PlanStep p;
    p.kind = s.kind;
    p.peer = s.peer();
    p.src_buffer = s.src.buffer;
    p.dst_buffer = s.dst.buffer;
    p.src = s.src.range;
    p.dst = s.dst.range;
    p.left_buffer = s.left.buffer;
    p.left = s.left.range;
    for (StepId d : schedule.deps(g)) {
      ++p.waits;
      if (steps[d].owner == rank)
        succ[local[d]].push_back(me);
      else {
        const std::uint32_t flag = flag_for(schedule, d, rank);
        by_flag[flag].push_back(me);
        plan.flag_source[flag] = steps[d].owner;
      }
    }
    p.note_begin = static_cast<std::uint32_t>(plan.notes.size());
    const auto notes = schedule.notifications(g);
    plan.notes.insert(plan.notes.end(), notes.begin(), notes.end());
    p.note_end = static_cast<std::uint32_t>(plan.notes.size());
    plan.steps.push_back(p);
    succ.emplace_back();
  }
  for (std::size_t i = 0; i < plan.steps.size(); ++i) {
    plan.steps[i].succ_begin = static_cast<std::uint32_t>(plan.successors.size());
    plan.successors.insert(plan.successors.end(), succ[i].begin(), succ[i].end());
    plan.steps[i].succ_end = static_cast<std::uint32_t>(plan.successors.size());
  }
  plan.release_begin.reserve(by_flag.size() + 1);
  for (const auto& released : by_flag) {
    plan.release_begin.push_back(static_cast<std::uint32_t>(plan.release.size()));
    plan.release.insert(plan.release.end(), released.begin(), released.end());
  }
  plan.release_begin.push_back(static_cast<std::uint32_t>(plan.release.size()));
  return plan;
}

namespace {

void sort_unique(std::vector<int>& ranks) {
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
}

// What plan_for_rank must keep for `rank`, judged from a schedule built
// keeping some ranks: the rank and every rank it notifies, with the peers of
// all their steps.
std::vector<int> neighbourhood(const Schedule& schedule, int rank) {
  const auto steps = schedule.steps();
  std::vector<int> owners{rank};
  for (StepId g = 0; g < steps.size(); ++g)
    if (steps[g].owner == rank)
      for (const Notification& n : schedule.notifications(g)) owners.push_back(n.target);
  sort_unique(owners);
  std::vector<int> needed = owners;
  for (const Step& s : steps)
    if (std::binary_search(owners.begin(), owners.end(), s.owner)) {
      needed.push_back(s.src.rank);
      needed.push_back(s.dst.rank);
    }
  sort_unique(needed);
  return needed;
}

}  // namespace

namespace {

RankPlan with_bounds(RankPlan plan, const PlanBounds& bounds) {
  plan.max_scratch_elems = bounds.scratch_elems;
  plan.max_flags = bounds.flags;
  return plan;
}

}  // namespace

RankPlan plan_for_rank(const Algorithm& algorithm, int ranks, std::size_t count, AlgorithmParams params,
                       std::size_t elem_bytes, int rank, int whole_up_to) {
  params.keep.clear();
  if (!algorithm.bounds) return project(algorithm.make(ranks, count, params, elem_bytes), rank);
  const PlanBounds bounds = algorithm.bounds(ranks, count, params, elem_bytes);
  if (algorithm.plan) return with_bounds(algorithm.plan(ranks, count, params, elem_bytes, rank), bounds);
  if (ranks <= whole_up_to) return with_bounds(project(algorithm.make(ranks, count, params, elem_bytes), rank), bounds);
  params.keep = {rank};
  for (;;) {
    const Schedule partial = algorithm.make(ranks, count, params, elem_bytes);
    const std::vector<int> needed = neighbourhood(partial, rank);
    if (std::includes(params.keep.begin(), params.keep.end(), needed.begin(), needed.end()))
      return with_bounds(project(partial, rank), bounds);
    params.keep.insert(params.keep.end(), needed.begin(), needed.end());
    sort_unique(params.keep);
  }
}

}  // namespace earlybird::coll
