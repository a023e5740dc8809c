// Hand-offs to oneTBB that ThreadSanitizer can see. libtbb is not
// instrumented, so TSan cannot see that enqueueing a task happens-before the
// task runs, and reports the task's captures as races. These wrappers add
// the missing edges (one global token: coarse, but only in TSan builds).
#pragma once

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include <cstddef>
#include <utility>

#if defined(__SANITIZE_THREAD__)
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
namespace earlybird::detail {
inline char tbb_handoff_token;
inline void handoff_release() { __tsan_release(&tbb_handoff_token); }
inline void handoff_acquire() { __tsan_acquire(&tbb_handoff_token); }
}  // namespace earlybird::detail
#else
namespace earlybird::detail {
inline void handoff_release() {}
inline void handoff_acquire() {}
}  // namespace earlybird::detail
#endif

namespace earlybird::detail {

// Releases when destroyed. TBB recycles a finished task's memory for the
// next task it allocates, possibly on another thread: the worker's last
// touch of the old task (destroying the callable's captures) must be
// published before the next enqueue (which acquires) writes the new one.
struct ReleaseWhenDestroyed {
  ReleaseWhenDestroyed() = default;
  ReleaseWhenDestroyed(const ReleaseWhenDestroyed&) = default;
  ~ReleaseWhenDestroyed() { handoff_release(); }
};

// A callable whose every copy or move publishes its state (release) and
// whose call acquires it first: TBB moves the callable into its task object,
// so the release must happen inside that move, after the members are written.
template <class Task>
class Handoff {
 public:
  explicit Handoff(Task task) : task_(std::move(task)) { handoff_release(); }
  Handoff(Handoff&& other) noexcept : task_(std::move(other.task_)) { handoff_release(); }
  Handoff(const Handoff& other) : task_(other.task_) { handoff_release(); }
  Handoff& operator=(const Handoff&) = delete;
  void operator()() const {
    handoff_acquire();
    task_();
    handoff_release();
  }

 private:
  ReleaseWhenDestroyed released_last_;  // declared first: destroyed after task_
  Task task_;
};

template <class Task>
void enqueue(oneapi::tbb::task_arena& arena, Task task) {
  handoff_acquire();
  arena.enqueue(Handoff<Task>(std::move(task)));
}

// parallel_for over [0, n) in grains; body(begin, end) on TBB workers.
template <class Body>
void parallel_ranges(std::size_t n, std::size_t grain, const Body& body) {
  handoff_release();
  oneapi::tbb::parallel_for(oneapi::tbb::blocked_range<std::size_t>(0, n, grain),
                            [&](const oneapi::tbb::blocked_range<std::size_t>& r) {
                              handoff_acquire();
                              body(r.begin(), r.end());
                              handoff_release();
                            });
  handoff_acquire();
}

}  // namespace earlybird::detail
