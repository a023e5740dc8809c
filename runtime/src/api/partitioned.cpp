// PartitionedCollective (partitioned.hpp): the parts' calls, queued at
// creation and released one by one by ready(); which parts this rank has
// readied (to refuse a second ready()) and, on destruction, the parts it
// never readied, which then fail instead of running.
#include "comm_core.hpp"

#include <earlybird/partitioned.hpp>

#include <atomic>
#include <numeric>

namespace earlybird {

struct PartitionedCollective::State {
  std::shared_ptr<detail::CommCore> core;  // the user handle: keeps the communicator open; null if creation failed
  std::shared_ptr<detail::CommCore::PartGates> gates;
  std::unique_ptr<std::atomic<bool>[]> readied;
  std::size_t parts = 0;
  std::string description;
  Future future;

  ~State() {
    if (!core) return;
    for (std::size_t k = 0; k < parts; ++k)
      if (!readied[k].load()) {
        core->abandon_parts(gates);
        return;
      }
  }
};

std::size_t PartitionedCollective::parts() const { return state_ ? state_->parts : 0; }

Future PartitionedCollective::future() const {
  if (!state_) return Future(detail::failed_future("earlybird allreduce_partitioned: invalid (default-constructed) handle"));
  return state_->future;
}

void PartitionedCollective::ready(std::size_t part) {
  if (!state_) throw Error("earlybird allreduce_partitioned: ready() on an invalid (default-constructed) handle");
  State& state = *state_;
  if (part >= state.parts)
    throw Error(state.description + ": ready(" + std::to_string(part) + "): no such part (" +
                std::to_string(state.parts) + " parts)");
  if (state.readied[part].exchange(true))
    throw Error(state.description + ": ready(" + std::to_string(part) + "): part already ready");
  if (state.core) state.core->release_part(state.gates, part);
}

namespace detail {

namespace {

std::string partitioned_description(const CollectiveCall& whole, std::size_t parts, int rank, int ranks) {
  std::string text = describe(whole, "partitioned", rank, ranks);
  return text.insert(text.find('(') + 1, std::to_string(parts) + " parts, ");
}

}  // namespace

PartitionedCollective make_partitioned(const std::shared_ptr<CommCore>& core, const CollectiveCall& whole,
                                       std::vector<std::size_t> part_counts) {
  auto state = std::make_shared<PartitionedCollective::State>();
  state->parts = part_counts.size();
  state->readied = std::make_unique<std::atomic<bool>[]>(state->parts);
  auto fail = [&](const std::string& why) {
    state->future = Future(failed_future(state->description + ": " + why));
    return PartitionedCollective(state);
  };
  if (!core) {
    state->description = "earlybird allreduce_partitioned";
    return fail("invalid (default-constructed) communicator");
  }
  state->description = partitioned_description(whole, state->parts, core->rank(), core->size());
  if (part_counts.empty()) return fail("no parts");
  const std::size_t total = std::accumulate(part_counts.begin(), part_counts.end(), std::size_t{0});
  if (total != whole.count)
    return fail("the parts hold " + std::to_string(total) + " elements, the vector " + std::to_string(whole.count));
  std::vector<CollectiveCall> parts;
  std::size_t offset = 0;
  const std::size_t elem = size_of(whole.type);
  for (std::size_t count : part_counts) {
    CollectiveCall part = whole;
    part.count = count;
    if (whole.input) part.input = static_cast<const std::byte*>(whole.input) + offset * elem;
    if (whole.output) part.output = static_cast<std::byte*>(whole.output) + offset * elem;
    if (std::string problem = tune_on_first_use(core, part); !problem.empty()) return fail(problem);
    parts.push_back(std::move(part));
    offset += count;
  }
  state->gates = std::make_shared<CommCore::PartGates>();
  state->gates->released.assign(state->parts, 0);
  state->gates->caller_runs.assign(state->parts, 0);
  state->future = core->run_partitioned(parts, state->gates);
  state->core = core;
  return PartitionedCollective(std::move(state));
}

}  // namespace detail
}  // namespace earlybird
