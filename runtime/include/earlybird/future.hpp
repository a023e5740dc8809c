// Future: the handle a collective returns at once. It completes when this
// rank's part of the collective is done, or with an exception (earlybird::Error)
// naming the collective, the rank and the cause.
#pragma once

#include <earlybird/error.hpp>

#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <string>

namespace earlybird {

namespace detail {
class FutureState;
}

class Future {
 public:
  Future() = default;  // an invalid future; valid() is false
  explicit Future(std::shared_ptr<detail::FutureState> state) : state_(std::move(state)) {}

  bool valid() const { return state_ != nullptr; }
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
  std::shared_ptr<detail::FutureState> state_;
};

namespace detail {

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

 private:
  void finish(std::exception_ptr error);
  struct Impl;
  std::shared_ptr<Impl> impl_ = make_impl();
  static std::shared_ptr<Impl> make_impl();
};

}  // namespace detail
}  // namespace earlybird
