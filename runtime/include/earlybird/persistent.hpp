// PersistentCollective: a collective prepared once and started many times,
// as MPI-4's MPI_Allreduce_init and MPI_Start (Communicator::allreduce_init,
// reduce_init, bcast_init). Preparing it checks the call (counts, type,
// operator, root, options, buffers), chooses the algorithm and builds the
// plans and bindings; each start() runs the collective on the same buffers,
// with what they hold at that moment. A call that cannot run fails every
// start() with the error an immediate call would have given.
//
// Starts are collective calls like any other: every rank starts in the same
// order relative to its other calls on the communicator. Starting again
// before the previous start's Future completed is an error (the new start
// fails, the running one is unaffected). One thread at a time per handle.
#pragma once

#include <earlybird/future.hpp>

#include <memory>

namespace earlybird {

class PersistentCollective {
 public:
  PersistentCollective() = default;  // invalid; start() fails
  bool valid() const { return state_ != nullptr; }
  Future start();

  struct State;
  explicit PersistentCollective(std::shared_ptr<State> state) : state_(std::move(state)) {}

 private:
  std::shared_ptr<State> state_;
};

}  // namespace earlybird
