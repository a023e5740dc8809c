#include "progress_engine.hpp"

#include "../base/backoff.hpp"
#include "../exec/tbb_handoff.hpp"
#include "../topo/topology.hpp"

#include <algorithm>
#include <system_error>

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/info.h>

#include <sched.h>
#include <sys/prctl.h>
#include <unistd.h>

namespace earlybird {
namespace {

// Counts one event in a counter only the progress thread writes: a relaxed
// load and store, no locked read-modify-write on the hot loop.
void count(std::atomic<std::uint64_t>& counter) {
  counter.store(counter.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

// TBB sizes its worker pool from the process's affinity mask, which mpirun
// often narrows to one core; earlybird sizes its arena from hwloc and ranks per
// node instead, so allow at least that many workers process-wide.
int allow_workers(int workers) {
  static oneapi::tbb::global_control limit(
      oneapi::tbb::global_control::max_allowed_parallelism,
      static_cast<std::size_t>(std::max(oneapi::tbb::info::default_concurrency(), 8) + 1));
  return std::max(1, workers);
}

bool any_urgent(const std::vector<std::shared_ptr<Pollable>>& active) {
  return std::any_of(active.begin(), active.end(), [](const auto& p) { return p->urgent(); });
}

}  // namespace

ProgressEngine::ProgressEngine(EngineOptions options)
    : options_(options), arena_(allow_workers(options.worker_threads), 0) {
  thread_ = std::thread([this] { run(); });
  // Publish the id before any request can ask on_progress_thread().
  std::unique_lock lock(mutex_);
  wake_.wait(lock, [&] { return thread_id_ != std::thread::id{}; });
}

ProgressEngine::~ProgressEngine() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
  std::unique_lock lock(mutex_);
  background_done_.wait(lock, [&] { return background_tasks_ == 0; });
}

std::function<void()> ProgressEngine::counted(std::function<void()> task) {
  {
    std::lock_guard lock(mutex_);
    ++background_tasks_;
  }
  // The task and its captures are destroyed before the count falls, so the
  // engine's destructor never returns while a worker still holds them.
  auto held = std::make_shared<std::function<void()>>(std::move(task));
  return [this, held] {
    (*held)();
    *held = nullptr;
    std::lock_guard lock(mutex_);
    if (--background_tasks_ == 0) background_done_.notify_all();
  };
}

void ProgressEngine::run_in_background(std::function<void()> task) { detail::enqueue(arena_, counted(std::move(task))); }

void ProgressEngine::run_on_own_thread(std::function<void()> task) {
  std::function<void()> run = counted(std::move(task));
  try {
    std::thread(run).detach();
  } catch (const std::system_error&) {  // no thread to be had: here, then
    run();
  }
}

void ProgressEngine::submit(std::function<void()> request) {
  {
    std::lock_guard lock(mutex_);
    requests_.push_back(std::move(request));
    has_requests_.store(true, std::memory_order_release);
    set_yielding(false);
  }
  wake_.notify_one();
}

void ProgressEngine::set_yielding(bool yielding) {
  if (!may_yield_ || yielding == yielding_.load(std::memory_order_relaxed)) return;
  const sched_param normal_priority{};
  if (sched_setscheduler(thread_tid_, yielding ? SCHED_BATCH : SCHED_OTHER, &normal_priority) == 0)
    yielding_.store(yielding, std::memory_order_relaxed);
}

// Progress thread: about to work or spin for an urgent collective.
void ProgressEngine::become_prompt() {
  if (!yielding_.load(std::memory_order_relaxed)) return;
  std::lock_guard lock(mutex_);
  set_yielding(false);
}

void ProgressEngine::activate(std::shared_ptr<Pollable> p) {
  if (std::find(active_.begin(), active_.end(), p) == active_.end()) active_.push_back(std::move(p));
}

bool ProgressEngine::drain_requests() {
  if (!has_requests_.load(std::memory_order_acquire)) return false;
  std::vector<std::function<void()>> batch;
  {
    std::lock_guard lock(mutex_);
    batch.swap(requests_);
    has_requests_.store(false, std::memory_order_relaxed);
  }
  for (auto& request : batch) request();
  return !batch.empty();
}

bool ProgressEngine::poll_active() {
  bool progressed = false;
  for (std::size_t i = 0; i < active_.size();) {
    bool still_active = true;
    progressed |= active_[i]->poll(still_active);
    if (still_active) {
      ++i;
    } else {
      active_[i] = active_.back();
      active_.pop_back();
    }
  }
  return progressed;
}

Pause pause_for(const std::vector<std::shared_ptr<Pollable>>& active, bool cores_shared_with_other_ranks) {
  bool messages = false, driven_elsewhere = false;
  for (const auto& p : active) {
    if (p->urgent()) {
      if (!p->waits_for_messages() || cores_shared_with_other_ranks) return Pause::soon;
      messages = true;
    } else if (!p->idle()) {
      driven_elsewhere = true;
    }
  }
  return messages || driven_elsewhere ? Pause::brief : Pause::idle;
}

// Sleeps as `step` says, but wakes at once when a request is submitted.
// `yielding`: set_yielding() for the sleep (a request submitted meanwhile
// makes the thread prompt again).
void ProgressEngine::wait_for_request(const BackoffAction& step, bool yielding) {
  if (step.kind != BackoffAction::Kind::sleep) {
    if (!yielding) become_prompt();
    return Backoff::perform(step);
  }
  std::unique_lock lock(mutex_);
  if (requests_.empty()) set_yielding(yielding);
  wake_.wait_for(lock, std::chrono::microseconds(step.sleep_us), [&] { return stop_ || !requests_.empty(); });
}

void ProgressEngine::run() {
  // Short sleeps in the backoff should be microseconds, not the default 50 us slack.
  prctl(PR_SET_TIMERSLACK, FineTimerSlack::kSlackNs, 0, 0, 0);
  if (options_.bind_cpu >= 0) topo::bind_this_thread_to_cpu(options_.bind_cpu);
  {
    std::lock_guard lock(mutex_);
    thread_id_ = std::this_thread::get_id();
    thread_tid_ = static_cast<int>(gettid());
    may_yield_ = topo::cores_shared();
  }
  wake_.notify_all();
  Backoff backoff(topo::cores_shared());
  Backoff brief_backoff = Backoff::for_messages(false);
  Backoff idle_backoff = Backoff::idle();
  constexpr std::uint64_t kTurnsPerStall = 16;
  std::uint64_t turns = 0;
  for (;;) {
    count(loop_turns_);
    if (options_.injected_stall.count() > 0 && ++turns % kTurnsPerStall == 0)
      std::this_thread::sleep_for(options_.injected_stall);
    const bool progressed = drain_requests() | poll_active();
    if (progressed) {
      backoff.reset();
      brief_backoff.reset();
      idle_backoff.reset();
      continue;
    }
    // Idle: block until a request arrives. (Spinning here first was measured
    // to cost milliseconds when mpirun binds a rank, and so its progress and
    // user threads, to one core: see docs/design.md.)
    if (active_.empty()) {
      std::unique_lock lock(mutex_);
      if (stop_ && requests_.empty()) return;
      if (requests_.empty()) {
        set_yielding(true);
        count(idle_blocks_);
        wake_.wait(lock, [&] { return stop_ || !requests_.empty(); });
      }
      backoff.reset();
      continue;
    }
    switch (pause_for(active_, topo::cores_shared_with_other_ranks())) {
      case Pause::soon:
        brief_backoff.reset();
        idle_backoff.reset();
        become_prompt();
        backoff.pause();
        break;
      case Pause::brief:
        backoff.reset();
        idle_backoff.reset();
        wait_for_request(brief_backoff.next(), !any_urgent(active_));
        break;
      case Pause::idle:
        backoff.reset();
        brief_backoff.reset();
        wait_for_request(idle_backoff.next(), true);
        break;
    }
  }
}

}  // namespace earlybird
