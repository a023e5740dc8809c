// The progress engine: one dedicated thread per process (per simulated rank in
// the sim tier) that issues every transport call, polls flags of active
// collectives with backoff, and runs requests handed to it by other threads
// through a multi-producer queue. It also owns the TBB arena that runs
// reduction tasks. Several communicators share one engine.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <oneapi/tbb/task_arena.h>

namespace earlybird {

struct BackoffAction;

// Something with outstanding work the progress thread must poll.
class Pollable {
 public:
  virtual ~Pollable() = default;
  // Progress thread only. Returns true if it made progress; false when idle.
  // `still_active` is set false when it has nothing left to poll.
  virtual bool poll(bool& still_active) = 0;
  // False while it only waits for something that may take long (a transport
  // served between collectives), or while a user thread drives it: the
  // engine then sleeps between polls (pause_for).
  virtual bool urgent() const { return true; }
  // True when it has nothing to do but wait for peers' requests (a
  // transport served between collectives), as opposed to work a user thread
  // drives now, which the engine takes over when that thread lets go.
  virtual bool idle() const { return !urgent(); }
  // True when what it waits for is a message from another machine
  // (Transport::waits_for_messages): the engine may then sleep between polls.
  virtual bool waits_for_messages() const { return false; }
};

// How a loop polling `active` should pause between polls that find nothing:
//   soon   spin or yield, as the cores allow (Backoff(shared)): some urgent
//          one waits for a rank of this machine, or for a message that a
//          rank sharing these cores may be sending;
//   brief  sleep 2-128 us (Backoff::for_messages): the urgent ones only wait
//          for messages from other machines, or a user thread drives one
//          now (the loop takes over when it lets go; a caller that lets go
//          with work left also wakes it, since where threads share CPUs
//          these sleeps yield: set_yielding);
//   idle   sleep up to 2 ms (Backoff::idle): all are idle (transports served
//          between collectives).
enum class Pause { soon, brief, idle };
Pause pause_for(const std::vector<std::shared_ptr<Pollable>>& active, bool cores_shared_with_other_ranks);

struct EngineOptions {
  int worker_threads = 1;  // TBB arena concurrency for reductions
  int bind_cpu = -1;       // OS CPU to bind the progress thread to; -1: unbound
  // Fault injection (EARLYBIRD_INJECT_STALL_US): a sleep this long once per
  // kTurnsPerStall loop turns; 0: none.
  std::chrono::microseconds injected_stall{0};
};

class ProgressEngine {
 public:
  explicit ProgressEngine(EngineOptions options);
  ~ProgressEngine();
  ProgressEngine(const ProgressEngine&) = delete;
  ProgressEngine& operator=(const ProgressEngine&) = delete;

  // Thread-safe: runs `request` on the progress thread, in submission order.
  void submit(std::function<void()> request);
  // Progress thread only: poll `p` until it reports itself inactive. The
  // engine keeps `p` alive meanwhile.
  void activate(std::shared_ptr<Pollable> p);
  bool on_progress_thread() const { return std::this_thread::get_id() == thread_id_; }
  oneapi::tbb::task_arena& arena() { return arena_; }
  // Thread-safe: runs `task` (which must not throw) on a TBB worker, for work
  // too long for the progress thread (building a plan). The engine waits for
  // such tasks before it goes.
  void run_in_background(std::function<void()> task);
  // The same on a thread of its own that ends with the task: for work right
  // before a call that needs this rank's CPU, since TBB's workers spin and
  // yield for a while after their last task (across the emulated hosts, one
  // CPU per rank, that held a first allreduce's caller off its CPU for
  // hundreds of microseconds; docs/benchmarks.md).
  void run_on_own_thread(std::function<void()> task);
  int worker_threads() const { return options_.worker_threads; }
  // Diagnostics (tests): turns of the progress loop so far, and how many of
  // them ended blocked, idle, until a request came.
  std::uint64_t loop_turns() const { return loop_turns_.load(std::memory_order_relaxed); }
  std::uint64_t idle_blocks() const { return idle_blocks_.load(std::memory_order_relaxed); }

 private:
  void run();
  bool drain_requests();
  bool poll_active();
  void wait_for_request(const BackoffAction& step, bool yielding);

  // Where the process's threads share CPUs (topo::cores_shared()), whether a
  // wake-up of this thread may take the CPU from the thread running there:
  // prompt (the kernel's default class) while it has work of its own, and
  // when a request is submitted; yielding (SCHED_BATCH: its wake-ups wait for
  // the running thread's slice to end) while it only serves idle
  // communicators or a user thread drives one. Then its periodic polls no
  // longer interrupt a user thread that is running a collective itself or
  // computing (docs/design.md, "Threads").
  void set_yielding(bool yielding);  // under mutex_
  void become_prompt();

  EngineOptions options_;
  oneapi::tbb::task_arena arena_;
  std::atomic<bool> yielding_{false};  // written under mutex_
  int thread_tid_ = 0;       // the progress thread's kernel id, once it runs
  bool may_yield_ = false;   // topo::cores_shared() when the thread started
  // `task` counted as a background task: run, destroyed, then uncounted.
  std::function<void()> counted(std::function<void()> task);
  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<std::function<void()>> requests_;
  std::atomic<bool> has_requests_{false};
  std::atomic<std::uint64_t> loop_turns_{0};   // written by the progress thread only
  std::atomic<std::uint64_t> idle_blocks_{0};  // written by the progress thread only
  bool stop_ = false;
  int background_tasks_ = 0;  // under mutex_
  std::condition_variable background_done_;
  std::vector<std::shared_ptr<Pollable>> active_;  // progress thread only
  std::thread::id thread_id_;
  std::thread thread_;
};

}  // namespace earlybird
