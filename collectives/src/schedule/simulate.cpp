// The schedule simulator (simulate.hpp): a list scheduler over the
// schedule's DAG. Steps enter a queue ordered by the time their dependencies
// (and their owner's arrival) allow them to start; each takes its resources
// (out and in port for a transfer, the owner's CPU otherwise; one of the
// node's shared CPUs too where ranks outnumber them) as they come free.
// O(S log S) for S steps, plus O(S) for the dependents' index.
#include <earlybird/collectives/simulate.hpp>

#include "step_cost.hpp"

#include <algorithm>
#include <array>
#include <functional>
#include <limits>
#include <queue>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>

namespace earlybird::coll {
namespace {

constexpr StepId kNoStep = std::numeric_limits<StepId>::max();

double bytes_of(const Step& step, std::size_t elem_bytes) {
  return static_cast<double>(step.src.range.count * elem_bytes);
}

bool within_node(const Step& step, const CostModel& model) { return model.same_node(step.src.rank, step.dst.rank); }

// Whether a transfer is a copy on its owner's CPU (CostModel::transfers_on_cpu).
bool transfer_on_cpu(const Step& step, const CostModel& model) {
  return step.is_transfer() && model.transfers_on_cpu && (model.node_ranks <= 0 || within_node(step, model));
}

// A copy of a rank's input onto the same range of its output, where the two
// are one buffer: the runtime skips it (a bcast root's output).
bool copies_onto_itself(const Step& step, const Shape& shape) {
  return shape.in_place && step.kind == StepKind::copy && step.src.buffer == Buffer::input &&
         step.dst.buffer == Buffer::output && step.src.rank == step.dst.rank && step.src.range == step.dst.range;
}

double cost_of(const Step& step, std::size_t elem_bytes, const CostModel& model, const Shape& shape) {
  if (copies_onto_itself(step, shape)) return 0;
  const bool apart = step.kind == StepKind::reduce &&
                     detail::reduces_apart(step.dst.buffer, step.dst.range, step.left.buffer, step.left.range,
                                           step.src.buffer, step.src.range);
  return detail::step_cost(step.kind, bytes_of(step, elem_bytes), step.is_transfer() && within_node(step, model), apart,
                           model);
}

// Who sends and who receives a transfer's bytes.
std::pair<int, int> sender_and_receiver(const Step& step) {
  return step.kind == StepKind::put ? std::pair(step.owner, step.dst.rank) : std::pair(step.src.rank, step.owner);
}

// One resource a step holds while it runs (a port or a CPU): when it comes
// free and which step held it last.
struct Resource {
  double free_at = 0;
  StepId last = kNoStep;
};

// The resources one step holds (nullptr: none in that place).
using Held = std::array<Resource*, 3>;

// Every step's dependents, in CSR form (the schedule stores dependencies).
struct Dependents {
  explicit Dependents(const Schedule& schedule) : begin(schedule.steps().size() + 1, 0) {
    const auto n = static_cast<StepId>(schedule.steps().size());
    for (StepId id = 0; id < n; ++id)
      for (StepId d : schedule.deps(id)) ++begin[d + 1];
    for (std::size_t i = 1; i < begin.size(); ++i) begin[i] += begin[i - 1];
    ids.resize(begin.back());
    std::vector<std::size_t> next(begin.begin(), begin.end() - 1);
    for (StepId id = 0; id < n; ++id)
      for (StepId d : schedule.deps(id)) ids[next[d]++] = id;
  }
  std::span<const StepId> of(StepId step) const { return {ids.data() + begin[step], ids.data() + begin[step + 1]}; }
  std::vector<std::size_t> begin;
  std::vector<StepId> ids;
};

class Simulator {
 public:
  Simulator(const Schedule& schedule, std::size_t elem_bytes, const CostModel& model, std::vector<double> arrivals)
      : schedule_(schedule),
        steps_(schedule.steps()),
        elem_bytes_(elem_bytes),
        model_(model),
        arrivals_(std::move(arrivals)),
        dependents_(schedule),
        ready_(steps_.size(), 0),
        ready_by_(steps_.size(), kNoStep),
        start_(steps_.size(), 0),
        finish_(steps_.size(), 0),
        started_by_(steps_.size(), kNoStep),
        why_(steps_.size(), "start"),
        out_(ranks()),
        in_(ranks()),
        cpu_(ranks()),
        link_out_(nodes()),
        link_in_(nodes()),
        shared_cpus_(model.cores > 0 ? std::max<std::size_t>(nodes(), 1) : 0,
                     std::vector<Resource>(static_cast<std::size_t>(std::max(model.cores, 0)))) {}

  Simulation run() {
    std::vector<std::uint32_t> waiting(steps_.size());
    for (StepId id = 0; id < steps_.size(); ++id) {
      ready_[id] = arrival(steps_[id].owner);
      waiting[id] = static_cast<std::uint32_t>(schedule_.deps(id).size());
      if (waiting[id] == 0) queue_.push({ready_[id], id});
    }
    while (!queue_.empty()) {
      const StepId id = queue_.top().second;
      queue_.pop();
      execute(id);
      for (StepId next : dependents_.of(id)) {
        if (finish_[id] > ready_[next]) {
          ready_[next] = finish_[id];
          ready_by_[next] = id;
        }
        if (--waiting[next] == 0) queue_.push({ready_[next], next});
      }
    }
    return result();
  }

 private:
  std::size_t ranks() const { return static_cast<std::size_t>(schedule_.ranks()); }
  std::size_t nodes() const {
    if (model_.node_ranks <= 0) return 0;
    return (ranks() + static_cast<std::size_t>(model_.node_ranks) - 1) / static_cast<std::size_t>(model_.node_ranks);
  }
  // The network links a transfer between nodes holds: the sender's node's
  // out-link, the receiver's node's in-link; none inside a node or with one
  // level.
  Held links_of(const Step& step) {
    if (!step.is_transfer() || model_.node_ranks <= 0 || within_node(step, model_)) return {};
    const auto [sender, receiver] = sender_and_receiver(step);
    const auto node = [&](int rank) { return static_cast<std::size_t>(rank / model_.node_ranks); };
    return {&link_out_[node(sender)], &link_in_[node(receiver)], nullptr};
  }
  double arrival(int rank) const { return arrivals_.empty() ? 0 : arrivals_[static_cast<std::size_t>(rank)]; }
  // With shared CPUs (model.cores): the one `rank` ran on last if it is free
  // by `ready` (no switch), else the one of its node free first.
  Resource* shared_cpu(int rank, double ready) {
    if (shared_cpus_.empty()) return nullptr;
    auto& cpus = shared_cpus_[model_.node_ranks > 0 ? static_cast<std::size_t>(rank / model_.node_ranks) : 0];
    for (Resource& cpu : cpus)
      if (cpu.free_at <= ready && cpu.last != kNoStep && steps_[cpu.last].owner == rank) return &cpu;
    return &*std::min_element(cpus.begin(), cpus.end(),
                              [](const Resource& a, const Resource& b) { return a.free_at < b.free_at; });
  }
  // Starts `id` when it is ready and its resources are free; records why it
  // started then.
  void execute(StepId id) {
    const Step& step = steps_[id];
    Resource* const cpu = &cpu_[static_cast<std::size_t>(step.owner)];
    Held held{cpu, nullptr, nullptr};
    if (step.is_transfer()) {
      const auto [sender, receiver] = sender_and_receiver(step);
      held = {&out_[static_cast<std::size_t>(sender)], &in_[static_cast<std::size_t>(receiver)],
              transfer_on_cpu(step, model_) ? cpu : nullptr};
    }
    double start = ready_[id];
    started_by_[id] = ready_by_[id];
    why_[id] = ready_by_[id] != kNoStep ? "dependency" : arrival(step.owner) > 0 ? "arrival" : "start";
    const Held links = links_of(step);
    const Held shared{shared_cpu(step.owner, ready_[id]), nullptr, nullptr};
    for (const auto& resources : {held, links, shared})
      for (const Resource* r : resources)
        if (r && r->free_at > start) {
          start = r->free_at;
          started_by_[id] = r->last;
          why_[id] = "busy";
        }
    start_[id] = start;
    finish_[id] = start + cost_of(step, elem_bytes_, model_, schedule_.shape());
    for (const auto& resources : {held, shared})
      for (Resource* r : resources)
        if (r) *r = {finish_[id], id};
    for (Resource* r : links)  // the wire is busy for the bytes, not for alpha
      if (r) *r = {start + model_.beta * bytes_of(step, elem_bytes_), id};
  }

  Simulation result() const {
    Simulation sim;
    sim.finish.resize(ranks());
    for (std::size_t r = 0; r < ranks(); ++r) sim.finish[r] = arrival(static_cast<int>(r));
    StepId last = kNoStep;
    for (StepId id = 0; id < steps_.size(); ++id) {
      const Step& step = steps_[id];
      auto ends = [&](int rank) {
        auto& f = sim.finish[static_cast<std::size_t>(rank)];
        f = std::max(f, finish_[id]);
      };
      ends(step.owner);
      if (step.is_transfer()) ends(sender_and_receiver(step).second);  // its data has landed
      if (last == kNoStep || finish_[id] > finish_[last]) last = id;
    }
    sim.time = sim.finish.empty() ? 0 : *std::max_element(sim.finish.begin(), sim.finish.end());
    for (StepId id = last; id != kNoStep; id = started_by_[id])
      sim.critical_path.push_back({id, start_[id], finish_[id], why_[id]});
    std::reverse(sim.critical_path.begin(), sim.critical_path.end());
    return sim;
  }

  const Schedule& schedule_;
  std::span<const Step> steps_;
  std::size_t elem_bytes_;
  CostModel model_;
  std::vector<double> arrivals_;
  Dependents dependents_;
  std::vector<double> ready_;       // when its dependencies and owner allow it to start
  std::vector<StepId> ready_by_;    // the dependency that finished last
  std::vector<double> start_, finish_;
  std::vector<StepId> started_by_;  // what it waited for last: a dependency or a resource's holder
  std::vector<const char*> why_;
  std::vector<Resource> out_, in_, cpu_;
  std::vector<Resource> link_out_, link_in_;  // per node, with two levels
  std::vector<std::vector<Resource>> shared_cpus_;  // per node: its CPUs, with model.cores
  std::priority_queue<std::pair<double, StepId>, std::vector<std::pair<double, StepId>>, std::greater<>> queue_;
};

}  // namespace

Simulation simulate(const Schedule& schedule, std::size_t elem_bytes, const CostModel& model,
                    const std::vector<double>& arrivals) {
  if (!arrivals.empty() && arrivals.size() != static_cast<std::size_t>(schedule.ranks()))
    throw std::invalid_argument("simulate: " + std::to_string(arrivals.size()) + " arrival times for " +
                                std::to_string(schedule.ranks()) + " ranks");
  if (model.alpha < 0 || model.beta < 0 || model.gamma < 0 || model.per_step < 0 || model.node_alpha < 0 ||
      model.node_beta < 0 || model.node_ranks < 0 || model.cores < 0)
    throw std::invalid_argument("simulate: alpha, beta, gamma, per_step, the node level and cores must not be negative");
  return Simulator(schedule, elem_bytes, model, arrivals).run();
}

WaitsOnOthers waits_on_other_ranks(const Schedule& schedule) {
  const std::span<const Step> steps = schedule.steps();
  std::vector<int> chain(steps.size(), 0);  // waits along the longest chain into each step
  std::set<std::pair<int, int>> woken;      // (rank, chain depth) of each wake
  WaitsOnOthers waits;
  for (StepId id = 0; id < steps.size(); ++id) {
    bool waits_here = false;
    for (StepId d : schedule.deps(id)) {
      const bool other = steps[d].owner != steps[id].owner;
      chain[id] = std::max(chain[id], chain[d] + (other ? 1 : 0));
      waits_here = waits_here || other;
    }
    waits.longest = std::max(waits.longest, chain[id]);
    if (waits_here) woken.insert({steps[id].owner, chain[id]});
  }
  waits.total = static_cast<int>(woken.size());
  return waits;
}

}  // namespace earlybird::coll
