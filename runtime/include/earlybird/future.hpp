// Future: the handle a collective returns at once. It completes when this
// rank's part of the collective is done, or with an exception (earlybird::Error)
// naming the collective, the rank and the cause.
#pragma once

#include <earlybird/error.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace earlybird {

namespace detail {
class FutureState;
class CommCore;
}

class Future {
 public:
  Future() = default;  // an invalid future; valid() is false
  explicit Future(std::shared_ptr<detail::FutureState> state) : state_(std::move(state)) {}

  bool valid() const { return completed_ || state_ != nullptr; }
  // True once completed (successfully or not); never blocks.
  bool ready() const;
  // Blocks until completion; rethrows the collective's error.
  void wait() const;
  // Waits at most `timeout`; true if completed (then rethrows any error).
  bool wait_for(std::chrono::nanoseconds timeout) const;
  // Runs `continuation` after this future completes successfully (on a worker
  // thread, never on the caller's); the returned future completes after it,
  // carrying this future's error or the continuation's exception.
  Future then(std::function<void()> continuation) const;
  // Calls `callback` once completed, with the error or nullptr: at once if
  // already complete, otherwise on the completing thread (often the progress
  // thread), so it must be short and must not wait.
  void on_complete(std::function<void(std::exception_ptr)> callback) const;

 private:
  // A future complete from the start, with no shared state: what a small
  // collective that finished inside the call returns (two atomic reference
  // count updates fewer per call than a shared completed state).
  friend class detail::CommCore;
  struct CompletedTag {};
  explicit Future(CompletedTag) : completed_(true) {}

  std::shared_ptr<detail::FutureState> state_;
  bool completed_ = false;
};

namespace detail {

// Work a waiting thread can drive itself instead of sleeping (a communicator
// running a caller-run collective, api/comm_core.hpp).
class Drivable {
 public:
  virtual ~Drivable() = default;
  // One turn; true if it made progress.
  virtual bool help() = 0;
  // The waiting thread stops taking turns (its work is done, or its wait
  // timed out): whoever drives next must be told.
  virtual void stop_helping() {}
};

// Shared completion state. complete()/fail() are called once by the runtime.
class FutureState {
 public:
  bool ready() const;
  void wait() const;
  bool wait_for(std::chrono::nanoseconds timeout) const;
  void complete();
  void fail(std::exception_ptr error);
  // Calls `callback` (with the error, or nullptr) once completed: at once if
  // already complete, otherwise from the completing thread.
  void on_complete(std::function<void(std::exception_ptr)> callback);
  // Set before the future is handed out: wait() and wait_for() drive
  // `helper` instead of sleeping, completing the work themselves.
  void set_helper(std::weak_ptr<Drivable> helper);

 private:
  void finish(std::exception_ptr error);
  bool help_until(Drivable& helper, std::chrono::steady_clock::time_point deadline) const;

  std::atomic<bool> done_{false};
  mutable std::mutex mutex_;
  mutable std::condition_variable cv_;
  std::exception_ptr error_;
  std::vector<std::function<void(std::exception_ptr)>> callbacks_;
  std::weak_ptr<Drivable> helper_;
};

}  // namespace detail
}  // namespace earlybird
