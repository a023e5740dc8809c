// Backoff for polling loops: spin, then yield, then sleep for growing spans,
// so an oversubscribed node (P ranks > cores) is not starved by pollers.
// next() says what the current step calls for (a pure policy, testable
// without sleeping); pause() does it.
#pragma once

#include "cpu_relax.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

namespace earlybird {

// What one backoff step does.
struct BackoffAction {
  enum class Kind { spin, yield, sleep };
  Kind kind = Kind::spin;
  int sleep_us = 0;  // for Kind::sleep only
  bool operator==(const BackoffAction&) const = default;
};

class Backoff {
 public:
  static constexpr int kSpinSteps = 2000;          // ~ tens of microseconds
  static constexpr int kYieldSteps = 200;
  static constexpr int kSharedYieldSteps = 20000;  // ~ tens of milliseconds of yields
  static constexpr int kMaxDoublings = 7;          // sleeps cap at 128 us
  static constexpr int kMaxIdleDoublings = 7;      // idle sleeps cap at 128 us too
  static constexpr int kRelaxesPerSpin = 1;

  // Shared: the poller competes for its cores with threads it waits on (a
  // rank bound to one core, or more ranks than cores). It then never spins
  // and yields for long before it sleeps, because a sleeping poller answers
  // late and every hop of a collective waits for one.
  explicit Backoff(bool shared)
      : spin_steps_(shared ? 0 : kSpinSteps), yield_steps_(shared ? kSharedYieldSteps : kYieldSteps) {}
  // For a poller with nothing urgent (serving a transport between
  // collectives): sleeps from the first step, so the threads that do have
  // work keep the cores.
  // Its sleeps grow to 2^kMaxIdleDoublings us.
  static Backoff idle() { return Backoff(0, 0, kMaxIdleDoublings); }
  void reset() { step_ = 0; }

  // Advances one step and returns what it calls for: steps 1, 2, ... spin
  // while below spin_steps_, then yield while below spin_steps_ +
  // yield_steps_, then sleep 1, 2, 4, ... us, capped at 2^kMaxDoublings us.
  BackoffAction next() {
    if (step_ < kLastStep) ++step_;  // saturates: the sleep is capped long before
    if (step_ < spin_steps_) return {BackoffAction::Kind::spin, 0};
    if (step_ < spin_steps_ + yield_steps_) return {BackoffAction::Kind::yield, 0};
    const int doublings = std::min(step_ - spin_steps_ - yield_steps_, max_doublings_);
    return {BackoffAction::Kind::sleep, 1 << doublings};
  }
  void pause() { perform(next()); }

  static void perform(const BackoffAction& action) {
    switch (action.kind) {
      case BackoffAction::Kind::spin:
        for (int i = 0; i < kRelaxesPerSpin; ++i) cpu_relax();
        break;
      case BackoffAction::Kind::yield:
        std::this_thread::yield();
        break;
      case BackoffAction::Kind::sleep:
        std::this_thread::sleep_for(std::chrono::microseconds(action.sleep_us));
        break;
    }
  }

 private:
  Backoff(int spin_steps, int yield_steps, int max_doublings)
      : spin_steps_(spin_steps), yield_steps_(yield_steps), max_doublings_(max_doublings) {}
  static constexpr int kLastStep = kSpinSteps + kSharedYieldSteps + kMaxIdleDoublings + 1;
  int spin_steps_;
  int yield_steps_;
  int max_doublings_ = kMaxDoublings;
  int step_ = 0;
};

}  // namespace earlybird
