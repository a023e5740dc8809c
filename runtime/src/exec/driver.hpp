// Driver: who runs a communicator's operations right now. One thread at a
// time holds the drive — the progress thread, or a user thread running a
// small collective itself (caller-run, docs/design.md) or helping while it
// waits for one. Only the holder touches the communicator's queue, its
// operations and its transport; work other threads hand over (a TBB worker's
// finished step that must notify peers, a submitted collective) waits in the
// inbox until the holder runs it.
#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace earlybird {

class Driver {
 public:
  // `wake` is called after each post(): it must make sure some thread will
  // drive soon (the communicator asks the progress thread to poll it).
  void on_post(std::function<void()> wake) { wake_ = std::move(wake); }

  // Never blocks: true if this thread now holds the drive. False on the
  // thread that already holds it (a completion callback submitting a
  // collective: it is queued instead).
  bool try_acquire() {
    if (held_here() || held_.exchange(true, std::memory_order_acquire)) return false;
    holder_.store(std::this_thread::get_id(), std::memory_order_relaxed);
    return true;
  }
  // Gives the drive up, then runs what the holder deferred to this moment.
  void release() {
    std::vector<std::function<void()>> deferred;
    deferred.swap(after_release_);
    holder_.store(std::thread::id{}, std::memory_order_relaxed);
    held_.store(false, std::memory_order_release);
    for (auto& work : deferred) work();
  }
  // Holder only: `work` runs once the drive is released. Completing a Future
  // goes here: it wakes the waiter, which the kernel may run at once on this
  // core; were the drive still held, the woken thread could not drive its
  // next collective itself and would wait for the preempted holder (measured:
  // ~60 us per call after a progress-thread-run collective at P = 2).
  void after_release(std::function<void()> work) { after_release_.push_back(std::move(work)); }
  // True on the thread holding the drive.
  bool held_here() const { return holder_.load(std::memory_order_relaxed) == std::this_thread::get_id(); }
  // True while some user thread (not the progress thread) holds it.
  bool held_by_caller() const { return caller_holds_.load(std::memory_order_relaxed); }
  void set_caller_holds(bool holds) { caller_holds_.store(holds, std::memory_order_relaxed); }

  // Any thread: `work` runs on the holder's thread, in post order.
  void post(std::function<void()> work) {
    {
      std::lock_guard lock(inbox_mutex_);
      inbox_.push_back(std::move(work));
      has_posted_.store(true, std::memory_order_release);
    }
    if (wake_) wake_();
  }
  bool has_posted() const { return has_posted_.load(std::memory_order_acquire); }
  // Holder only: runs what was posted so far; true if it ran anything.
  bool run_posted() {
    if (!has_posted()) return false;
    std::vector<std::function<void()>> batch;
    {
      std::lock_guard lock(inbox_mutex_);
      batch.swap(inbox_);
      has_posted_.store(false, std::memory_order_relaxed);
    }
    for (auto& work : batch) work();
    return !batch.empty();
  }

 private:
  // Taken only by try_acquire, never waited for: a flag, not a mutex (a
  // pthread mutex's trylock and unlock cost ~10 ns of a 100 ns call at P = 1).
  std::atomic<bool> held_{false};
  std::atomic<std::thread::id> holder_{};
  std::atomic<bool> caller_holds_{false};
  std::vector<std::function<void()>> after_release_;  // holder only
  std::mutex inbox_mutex_;
  std::vector<std::function<void()>> inbox_;
  std::atomic<bool> has_posted_{false};
  std::function<void()> wake_;
};

// Holds the drive for a scope, if it could be had.
class DriveHold {
 public:
  DriveHold(Driver& driver, bool caller) : driver_(&driver), held_(driver.try_acquire()), caller_(caller) {
    if (held_ && caller_) driver_->set_caller_holds(true);
  }
  ~DriveHold() {
    if (!held_) return;
    if (caller_) driver_->set_caller_holds(false);
    driver_->release();
  }
  DriveHold(const DriveHold&) = delete;
  DriveHold& operator=(const DriveHold&) = delete;
  explicit operator bool() const { return held_; }

 private:
  Driver* driver_;
  bool held_;
  bool caller_;
};

}  // namespace earlybird
