#include <earlybird/future.hpp>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "../exec/tbb_handoff.hpp"
#include "../base/cpu_relax.hpp"
#include "../topo/topology.hpp"

#include <oneapi/tbb/task_arena.h>

namespace earlybird {
namespace detail {

struct FutureState::Impl {
  std::atomic<bool> done{false};
  mutable std::mutex mutex;
  mutable std::condition_variable cv;
  std::exception_ptr error;
  std::vector<std::function<void(std::exception_ptr)>> callbacks;
};

std::shared_ptr<FutureState::Impl> FutureState::make_impl() { return std::make_shared<Impl>(); }

bool FutureState::ready() const { return impl_->done.load(std::memory_order_acquire); }

namespace {
// Short collectives finish within microseconds: spin briefly before sleeping
// on the condition variable, which costs a futex wake-up. Only briefly: when a
// rank has one core, a spinning waiter steals it from the progress thread.
constexpr int kSpinsBeforeBlocking = 4000;
}  // namespace

void FutureState::wait() const {
  const int spins = topo::cores_shared() ? 0 : kSpinsBeforeBlocking;
  for (int i = 0; i < spins && !ready(); ++i) cpu_relax();
  std::unique_lock lock(impl_->mutex);
  impl_->cv.wait(lock, [&] { return impl_->done.load(std::memory_order_acquire); });
  if (impl_->error) std::rethrow_exception(impl_->error);
}

bool FutureState::wait_for(std::chrono::nanoseconds timeout) const {
  std::unique_lock lock(impl_->mutex);
  if (!impl_->cv.wait_for(lock, timeout, [&] { return impl_->done.load(std::memory_order_acquire); }))
    return false;
  if (impl_->error) std::rethrow_exception(impl_->error);
  return true;
}

void FutureState::complete() { finish(nullptr); }
void FutureState::fail(std::exception_ptr error) { finish(std::move(error)); }

void FutureState::finish(std::exception_ptr error) {
  std::vector<std::function<void(std::exception_ptr)>> callbacks;
  {
    std::lock_guard lock(impl_->mutex);
    if (impl_->done.load(std::memory_order_relaxed)) return;
    impl_->error = error;
    impl_->done.store(true, std::memory_order_release);
    callbacks.swap(impl_->callbacks);
  }
  impl_->cv.notify_all();
  for (auto& cb : callbacks) cb(error);
}

void FutureState::on_complete(std::function<void(std::exception_ptr)> callback) {
  std::exception_ptr error;
  {
    std::lock_guard lock(impl_->mutex);
    if (!impl_->done.load(std::memory_order_relaxed)) {
      impl_->callbacks.push_back(std::move(callback));
      return;
    }
    error = impl_->error;
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

bool Future::ready() const { return state_ && state_->ready(); }

void Future::wait() const {
  if (!state_) throw Error("earlybird: wait() on an invalid Future");
  state_->wait();
}

bool Future::wait_for(std::chrono::nanoseconds timeout) const {
  if (!state_) throw Error("earlybird: wait_for() on an invalid Future");
  return state_->wait_for(timeout);
}

void Future::on_complete(std::function<void(std::exception_ptr)> callback) const {
  if (!state_) throw Error("earlybird: on_complete() on an invalid Future");
  state_->on_complete(std::move(callback));
}

Future Future::then(std::function<void()> continuation) const {
  if (!state_) throw Error("earlybird: then() on an invalid Future");
  auto next = std::make_shared<detail::FutureState>();
  state_->on_complete([next, continuation = std::move(continuation)](std::exception_ptr error) {
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
