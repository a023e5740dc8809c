// PersistentCollective (persistent.hpp): the prepared call and the Future of
// its latest start, which a new start must find completed.
#include "comm_core.hpp"

#include <earlybird/persistent.hpp>

#include <mutex>

namespace earlybird {

struct PersistentCollective::State {
  std::shared_ptr<detail::CommCore> core;  // the user handle: keeps the communicator open
  detail::CommCore::Persistent prepared;
  std::mutex mutex;  // serialises start()
  Future latest;
};

Future PersistentCollective::start() {
  if (!state_) return Future(detail::failed_future("earlybird start: invalid (default-constructed) persistent collective"));
  State& state = *state_;
  std::lock_guard lock(state.mutex);
  if (!state.core)
    return Future(detail::failed_future(state.prepared.problem));
  if (state.latest.valid() && !state.latest.ready())
    return Future(detail::failed_future(state.prepared.prepared->description +
                                        ": started again before the previous start completed"));
  state.latest = state.core->start(state.prepared);
  return state.latest;
}

namespace detail {

PersistentCollective make_persistent(const std::shared_ptr<CommCore>& core, const CollectiveCall& call) {
  auto state = std::make_shared<PersistentCollective::State>();
  if (!core) {
    state->prepared.problem = std::string("earlybird ") + coll::to_string(call.collective) +
                              ": invalid (default-constructed) communicator";
    return PersistentCollective(std::move(state));
  }
  state->core = core;
  if (std::string problem = tune_on_first_use(core, call); !problem.empty()) {
    state->prepared.problem = problem;
    return PersistentCollective(std::move(state));
  }
  state->prepared = core->make_persistent(call);
  return PersistentCollective(std::move(state));
}

}  // namespace detail
}  // namespace earlybird
