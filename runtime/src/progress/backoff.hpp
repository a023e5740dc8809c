// Backoff for polling loops: spin, then yield, then sleep for growing spans,
// so an oversubscribed node (P ranks > cores) is not starved by pollers.
#pragma once

#include <algorithm>
#include <chrono>
#include <thread>

namespace earlybird {

class Backoff {
 public:
  // `may_spin`: false when the poller shares its only core with other threads
  // of the rank (spinning would steal the core from them); it then starts
  // with yielding.
  explicit Backoff(bool may_spin) : spin_steps_(may_spin ? kSpinSteps : 0) {}
  void reset() { step_ = 0; }
  void pause() {
    ++step_;
    if (step_ < spin_steps_) {
      for (int i = 0; i < 16; ++i) cpu_relax();
    } else if (step_ < spin_steps_ + kYieldSteps) {
      std::this_thread::yield();
    } else {
      const int doublings = std::min(step_ - spin_steps_ - kYieldSteps, kMaxDoublings);
      std::this_thread::sleep_for(std::chrono::microseconds(1 << doublings));
    }
  }

 private:
  static void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#else
    std::this_thread::yield();
#endif
  }
  static constexpr int kSpinSteps = 2000;   // ~ tens of microseconds
  static constexpr int kYieldSteps = 200;
  static constexpr int kMaxDoublings = 7;   // sleeps cap at 128 us
  int spin_steps_;
  int step_ = 0;
};

}  // namespace earlybird
