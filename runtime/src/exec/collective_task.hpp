// CollectiveTask: one batch of one collective as a communicator runs it,
// whatever executes it: an Operation (a RankPlan, step by step), an
// InlineCollective (data-carrying flag lines) or PeerReads (copies out of
// the peers' user buffers). The communicator starts its
// tasks one after another in submission order and polls the active one; every
// call but fail() is made by the holder of the communicator's drive.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace earlybird {

// A task's first failure, set from any thread; reading it costs one atomic
// load while there is none.
class FirstFailure {
 public:
  bool failed() const { return failed_.load(std::memory_order_acquire); }
  std::exception_ptr error() const {
    if (!failed()) return nullptr;
    std::lock_guard lock(mutex_);
    return error_;
  }
  // Keeps `error` unless a failure came first.
  void set(std::exception_ptr error) {
    std::lock_guard lock(mutex_);
    if (error_) return;
    error_ = std::move(error);
    failed_.store(true, std::memory_order_release);
  }

 private:
  std::atomic<bool> failed_{false};
  mutable std::mutex mutex_;
  std::exception_ptr error_;
};

class CollectiveTask {
 public:
  virtual ~CollectiveTask() = default;
  // False when it exchanges nothing with peers (count 0, or P = 1): it then
  // runs locally and consumes no sequence number.
  virtual bool talks_to_peers() const = 0;
  // Begin with this sequence number (0: it exchanges nothing).
  virtual void start(std::uint64_t sequence) = 0;
  // Look at what it waits for and the watchdog. True on progress.
  virtual bool poll() = 0;
  // Done, or failed with nothing still touching user buffers.
  virtual bool finished() const = 0;
  virtual std::exception_ptr error() const = 0;
  // Any thread: fail with `cause` (first failure wins).
  virtual void fail(const std::string& cause) = 0;
  virtual std::uint64_t sequence() const = 0;
  // "earlybird allreduce(...) on rank r of P": what errors start with.
  virtual const std::string& description() const = 0;
  // Called once when it finished without error.
  virtual void succeeded() {}
  // Appends the ranks that raised this rank's flags in the task (the peers
  // that wrote into its lane), each once; the lane guard tells them when it
  // finished (LaneGuard::finished). Tasks over direct windows append none:
  // a peer reads their done word with a load.
  virtual void add_writers(std::vector<int>& /*ranks*/) const {}
  // Where this rank receives nothing from its peers in the task (a bcast's
  // root, a reduce's non-root): the flag value its call carries, so that the
  // communicator can compare it with its peers' (exec/silent_role.hpp); none
  // where it receives something (then it sees a disagreeing peer itself).
  virtual std::optional<std::uint64_t> silent_flag_value() const { return std::nullopt; }

  // The watchdog's failure: fail(cause), remembered as a timeout (the
  // communicator then names the ranks that have not called the collective).
  void time_out(const std::string& cause) {
    timed_out_.store(true, std::memory_order_relaxed);
    fail(cause);
  }
  bool timed_out() const { return timed_out_.load(std::memory_order_relaxed); }

 private:
  std::atomic<bool> timed_out_{false};
};

}  // namespace earlybird
