// PartitionedCollective: an allreduce whose vector is produced in parts — a
// backward pass that finishes one layer's gradients at a time
// (Communicator::allreduce_partitioned). ready(i) says part i is final on
// this rank; part i is reduced as its own allreduce once every rank has
// readied it, while the caller goes on producing the next parts. future()
// completes when every part is reduced (or fails with the first error).
//
// Creating it is a collective call: every rank creates it with the same
// parts, in the same order relative to its other calls on the communicator.
// Parts run in index order, so number them in the order they are produced (a
// part readied early waits for the parts before it). Collectives submitted
// after it run after all its parts: ready every part before waiting on one of
// those. ready() may be called from any thread; a part out of range or
// readied twice throws earlybird::Error naming the collective, the rank and
// the part. Dropping the handle before every part was readied fails the
// parts not readied (and so the peers' future), never runs them on stale
// buffers. Arrival-ordered algorithms are not available here.
#pragma once

#include <earlybird/future.hpp>

#include <cstddef>
#include <memory>

namespace earlybird {

class PartitionedCollective {
 public:
  PartitionedCollective() = default;  // invalid
  bool valid() const { return state_ != nullptr; }
  std::size_t parts() const;
  void ready(std::size_t part);
  Future future() const;

  struct State;
  explicit PartitionedCollective(std::shared_ptr<State> state) : state_(std::move(state)) {}

 private:
  std::shared_ptr<State> state_;
};

}  // namespace earlybird
