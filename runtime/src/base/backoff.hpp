// Backoff for polling loops: spin, then yield, then sleep for growing spans,
// so an oversubscribed node (P ranks > cores) is not starved by pollers.
// next() says what the current step calls for (a pure policy, testable
// without sleeping); pause() does it.
#pragma once

#include "cpu_relax.hpp"

#include <sys/prctl.h>

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
  static constexpr int kMaxIdleDoublings = 11;     // idle sleeps cap at 2048 us
  static constexpr int kRelaxesPerSpin = 1;

  // Shared: the poller competes for its cores with threads it waits on (a
  // rank bound to one core, or more ranks than cores). It then never spins
  // and yields for long before it sleeps, because a sleeping poller answers
  // late and every hop of a collective waits for one.
  explicit Backoff(bool shared)
      : spin_steps_(shared ? 0 : kSpinSteps), yield_steps_(shared ? kSharedYieldSteps : kYieldSteps) {}
  // For a poller with nothing urgent (serving a transport between
  // collectives): sleeps from the first step, so the threads that do have
  // work keep the cores. Its sleeps double to 2^kMaxIdleDoublings us, so a
  // peer's request to a rank idle for a while waits at most about half that
  // while (2 ms at most): each wake-up costs the computation beside it tens
  // of microseconds of CPU, and at a 128 us cap an idle communicator across
  // the emulated hosts took 11-14 % of its host's CPU (docs/benchmarks.md,
  // "An idle communicator's cost").
  static Backoff idle() { return Backoff(0, 0, kMaxIdleDoublings); }
  // For a poller waiting for a message from another machine (a put's data
  // across the network): what it waits for needs none of this machine's
  // CPUs, so it sleeps from the first step (2, 4, ... 128 us), unless ranks of
  // this machine share its cores (then the message may come from one of
  // them, which needs the CPU: the usual policy). A yield would give a
  // CPU-bound thread of this process (a computation overlapping the
  // collective) a whole scheduler slice, milliseconds, before the next poll;
  // a sleep wakes after its span. Callers off the progress thread hold a
  // FineTimerSlack while they wait, so the short sleeps are short.
  static Backoff for_messages(bool cores_shared_with_other_ranks) {
    return cores_shared_with_other_ranks ? Backoff(true) : Backoff(0, 0, kMaxDoublings);
  }
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

// Makes the calling thread's sleeps precise to a microsecond while it lives
// (Linux's default timer slack, 50 us, would stretch Backoff's 1-128 us
// sleeps), then restores the thread's own slack. For waits that sleep on a
// user's thread; the progress thread sets its slack once.
class FineTimerSlack {
 public:
  FineTimerSlack() : previous_(prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0)) {
    if (previous_ > static_cast<int>(kSlackNs)) prctl(PR_SET_TIMERSLACK, kSlackNs, 0, 0, 0);
  }
  ~FineTimerSlack() {
    if (previous_ > static_cast<int>(kSlackNs)) prctl(PR_SET_TIMERSLACK, static_cast<unsigned long>(previous_), 0, 0, 0);
  }
  FineTimerSlack(const FineTimerSlack&) = delete;
  FineTimerSlack& operator=(const FineTimerSlack&) = delete;
  static constexpr unsigned long kSlackNs = 1000;

 private:
  int previous_;
};

}  // namespace earlybird
