// Backoff for polling loops: spin, then yield, then sleep for growing spans,
// so an oversubscribed node (P ranks > cores) is not starved by pollers.
#pragma once

#include <algorithm>
#include <chrono>
#include <thread>

namespace earlybird {

class Backoff {
 public:
  void reset() { step_ = 0; }
  void pause() {
    ++step_;
    if (step_ < kSpinSteps) {
      for (int i = 0; i < 16; ++i) cpu_relax();
    } else if (step_ < kSpinSteps + kYieldSteps) {
      std::this_thread::yield();
    } else {
      const int doublings = std::min(step_ - kSpinSteps - kYieldSteps, kMaxDoublings);
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
  int step_ = 0;
};

}  // namespace earlybird
