// simulate_symmetric (simulate.hpp): a list scheduler over one rank's plan.
// Steps enter a queue ordered by the time their local predecessors and
// mirrored flags allow them to start (ties: program order) and take their
// resource as it comes free, as simulate() does for a whole schedule.
#include <earlybird/collectives/plan.hpp>
#include <earlybird/collectives/simulate.hpp>

#include "step_cost.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <queue>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace earlybird::coll {
namespace {

constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

std::string not_symmetric(const RankPlan& plan, const std::string& why) {
  return "simulate_symmetric: " + plan.algorithm + " at P = " + std::to_string(plan.ranks) + ", rank " +
         std::to_string(plan.rank) + ": " + why;
}

// Per step: the flag numbers it raises that stand for the flags this rank
// receives (the first step raising each number).
std::vector<std::vector<std::uint32_t>> mirrored_flags(const RankPlan& plan) {
  std::vector<std::uint32_t> raiser(plan.flags, kNone);
  for (std::uint32_t s = 0; s < plan.steps.size(); ++s)
    for (std::uint32_t n = plan.steps[s].note_begin; n < plan.steps[s].note_end; ++n) {
      const std::uint32_t flag = plan.notes[n].flag;
      if (flag < plan.flags && raiser[flag] == kNone) raiser[flag] = s;
    }
  std::vector<std::vector<std::uint32_t>> mirrors(plan.steps.size());
  for (std::uint32_t f = 0; f < plan.flags; ++f) {
    if (raiser[f] == kNone)
      throw std::invalid_argument(not_symmetric(plan, "it waits for flag " + std::to_string(f) +
                                                          " but raises none of that number"));
    mirrors[raiser[f]].push_back(f);
  }
  return mirrors;
}

}  // namespace

Simulation simulate_symmetric(const RankPlan& plan, std::size_t elem_bytes, const CostModel& model) {
  if (model.node_ranks > 0) throw std::invalid_argument(not_symmetric(plan, "two-level models are not supported"));
  const auto n = static_cast<std::uint32_t>(plan.steps.size());
  const std::vector<std::vector<std::uint32_t>> mirrors = mirrored_flags(plan);
  std::vector<std::uint32_t> waiting(n);
  std::vector<double> ready(n, 0);
  std::priority_queue<std::pair<double, std::uint32_t>, std::vector<std::pair<double, std::uint32_t>>, std::greater<>>
      queue;
  for (std::uint32_t s = 0; s < n; ++s) {
    waiting[s] = plan.steps[s].waits;
    if (waiting[s] == 0) queue.push({0, s});
  }
  auto release = [&](std::uint32_t step, double at) {
    ready[step] = std::max(ready[step], at);
    if (--waiting[step] == 0) queue.push({ready[step], step});
  };
  double out_port = 0, in_port = 0, cpu = 0, last = 0;
  std::uint32_t done = 0;
  while (!queue.empty()) {
    const std::uint32_t s = queue.top().second;
    queue.pop();
    const PlanStep& step = plan.steps[s];
    double& resource = step.kind == StepKind::put ? out_port : step.kind == StepKind::get ? in_port : cpu;
    const bool also_cpu = &resource != &cpu && model.transfers_on_cpu;  // a copy on this rank's core
    const double start = std::max({ready[s], resource, also_cpu ? cpu : 0.0});
    const double bytes = static_cast<double>(step.src.count * elem_bytes);
    const bool apart = step.kind == StepKind::reduce &&
                       detail::reduces_apart(step.dst_buffer, step.dst, step.left_buffer, step.left, step.src_buffer,
                                             step.src);
    const double finish = start + detail::step_cost(step.kind, bytes, false, apart, model);
    resource = finish;
    if (also_cpu) cpu = finish;
    last = std::max(last, finish);
    ++done;
    for (std::uint32_t i = step.succ_begin; i < step.succ_end; ++i) release(plan.successors[i], finish);
    for (std::uint32_t f : mirrors[s])
      for (std::uint32_t i = plan.release_begin[f]; i < plan.release_begin[f + 1]; ++i) release(plan.release[i], finish);
  }
  if (done < n)
    throw std::invalid_argument(not_symmetric(plan, std::to_string(n - done) + " of " + std::to_string(n) +
                                                        " steps wait on mirrored flags that wait on them"));
  Simulation sim;
  sim.finish.assign(static_cast<std::size_t>(plan.ranks), last);
  sim.time = last;
  return sim;
}

}  // namespace earlybird::coll
