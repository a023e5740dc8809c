#include <earlybird/future.hpp>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "../exec/tbb_handoff.hpp"
#include "../base/backoff.hpp"
#include "../base/cpu_relax.hpp"
#include "../topo/topology.hpp"

#include <oneapi/tbb/task_arena.h>

namespace earlybird {
namespace detail {

bool FutureState::ready() const { return done_.load(std::memory_order_acquire); }

namespace {
// Short collectives finish within microseconds: spin briefly before sleeping
// on the condition variable, which costs a futex wake-up. Only briefly: when a
// rank has one core, a spinning waiter steals it from the progress thread.
constexpr int kSpinsBeforeBlocking = 4000;
}  // namespace

// Drives the work with the helper until done or `deadline`; true if done.
bool FutureState::help_until(Drivable& helper, std::chrono::steady_clock::time_point deadline) const {
  // The helper drives the work itself: spinning competes with no thread of
  // this rank (the progress thread backs off meanwhile), only with other
  // ranks' threads where they may run on this rank's CPUs.
  Backoff backoff(topo::cores_shared_with_other_ranks());
  while (!ready()) {
    if (helper.help()) {
      backoff.reset();
    } else {
      if (deadline != std::chrono::steady_clock::time_point::max() && std::chrono::steady_clock::now() > deadline) {
        helper.stop_helping();
        return false;
      }
      backoff.pause();
    }
  }
  helper.stop_helping();
  return true;
}

void FutureState::wait() const {
  if (ready()) {  // done_ is stored (release) after error_
    if (error_) std::rethrow_exception(error_);
    return;
  }
  if (auto helper = helper_.lock()) {
    help_until(*helper, std::chrono::steady_clock::time_point::max());
  } else {
    const int spins = topo::cores_shared() ? 0 : kSpinsBeforeBlocking;
    for (int i = 0; i < spins && !ready(); ++i) cpu_relax();
  }
  std::unique_lock lock(mutex_);
  cv_.wait(lock, [&] { return done_.load(std::memory_order_acquire); });
  if (error_) std::rethrow_exception(error_);
}

bool FutureState::wait_for(std::chrono::nanoseconds timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  if (auto helper = helper_.lock(); helper && !help_until(*helper, deadline)) return false;
  std::unique_lock lock(mutex_);
  if (!cv_.wait_until(lock, deadline, [&] { return done_.load(std::memory_order_acquire); }))
    return false;
  if (error_) std::rethrow_exception(error_);
  return true;
}

void FutureState::set_helper(std::weak_ptr<Drivable> helper) { helper_ = std::move(helper); }

void FutureState::complete() { finish(nullptr); }
void FutureState::fail(std::exception_ptr error) { finish(std::move(error)); }

void FutureState::finish(std::exception_ptr error) {
  std::vector<std::function<void(std::exception_ptr)>> callbacks;
  {
    std::lock_guard lock(mutex_);
    if (done_.load(std::memory_order_relaxed)) return;
    error_ = error;
    done_.store(true, std::memory_order_release);
    callbacks.swap(callbacks_);
  }
  cv_.notify_all();
  for (auto& cb : callbacks) cb(error);
}

void FutureState::on_complete(std::function<void(std::exception_ptr)> callback) {
  std::exception_ptr error;
  {
    std::lock_guard lock(mutex_);
    if (!done_.load(std::memory_order_relaxed)) {
      callbacks_.push_back(std::move(callback));
      return;
    }
    error = error_;
  }
  callback(error);
}

}  // namespace detail

namespace {
oneapi::tbb::task_arena& continuation_arena() {
  // Deliberately never destroyed: continuations may be pending at exit.
  static auto* arena = new oneapi::tbb::task_arena();
  return *arena;
}
}  // namespace

bool Future::ready() const { return completed_ || (state_ && state_->ready()); }

void Future::wait() const {
  if (completed_) return;
  if (!state_) throw Error("earlybird: wait() on an invalid Future");
  state_->wait();
}

bool Future::wait_for(std::chrono::nanoseconds timeout) const {
  if (completed_) return true;
  if (!state_) throw Error("earlybird: wait_for() on an invalid Future");
  return state_->wait_for(timeout);
}

void Future::on_complete(std::function<void(std::exception_ptr)> callback) const {
  if (completed_) return callback(nullptr);
  if (!state_) throw Error("earlybird: on_complete() on an invalid Future");
  state_->on_complete(std::move(callback));
}

Future Future::then(std::function<void()> continuation) const {
  if (!valid()) throw Error("earlybird: then() on an invalid Future");
  auto next = std::make_shared<detail::FutureState>();
  on_complete([next, continuation = std::move(continuation)](std::exception_ptr error) {
    if (error) return next->fail(error);
    // Run on a TBB worker: the completing thread may be the progress thread.
    detail::enqueue(continuation_arena(), [next, continuation] {
      try {
        continuation();
        next->complete();
      } catch (...) {
        next->fail(std::current_exception());
      }
    });
  });
  return Future(next);
}

}  // namespace earlybird
