// Backoff for polling loops: spin, then yield, then sleep for growing spans,
// so an oversubscribed node (P ranks > cores) is not starved by pollers.
#pragma once

#include <algorithm>
#include <chrono>
#include <thread>

namespace earlybird {

class Backoff {
 public:
  // Shared: the poller competes for its cores with threads it waits on (a
  // rank bound to one core, or more ranks than cores). It then never spins
  // and yields for long before it sleeps, because a sleeping poller answers
  // late and every hop of a collective waits for one.
  explicit Backoff(bool shared)
      : spin_steps_(shared ? 0 : kSpinSteps), yield_steps_(shared ? kSharedYieldSteps : kYieldSteps) {}
  void reset() { step_ = 0; }
  void pause() {
    ++step_;
    if (step_ < spin_steps_) {
      for (int i = 0; i < 16; ++i) cpu_relax();
    } else if (step_ < spin_steps_ + yield_steps_) {
      std::this_thread::yield();
    } else {
      const int doublings = std::min(step_ - spin_steps_ - yield_steps_, kMaxDoublings);
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
  static constexpr int kSharedYieldSteps = 20000;  // ~ tens of milliseconds of yields
  static constexpr int kMaxDoublings = 7;   // sleeps cap at 128 us
  int spin_steps_;
  int yield_steps_;
  int step_ = 0;
};

}  // namespace earlybird
