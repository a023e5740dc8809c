// Watchdog: how long a collective task may wait without progress. The clock
// is read once per kPollsPerWatch idle polls (a clock read costs about as
// much as a poll); the timeout counts from the first look after the last
// progress. Drive holder only.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace earlybird {

class Watchdog {
 public:
  using Clock = std::chrono::steady_clock;
  explicit Watchdog(Clock::duration timeout) : timeout_(timeout) {}

  void progressed() { progressed_ = true; }
  // As new, for another task.
  void restart() {
    idle_polls_ = 0;
    progressed_ = true;
  }
  // One poll that found nothing: true when, at this poll's turn to read the
  // clock, the timeout has passed.
  bool idle_poll_expired() { return ++idle_polls_ % kPollsPerWatch == 0 && expired(); }
  // Reads the clock: has the timeout passed since the progress last seen?
  bool expired() {
    const auto now = Clock::now();
    if (progressed_) {
      progressed_ = false;
      deadline_ = now + timeout_;
      return false;
    }
    return now > deadline_;
  }
  // "120000 ms", for messages.
  std::string timeout_text() const {
    return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(timeout_).count()) + " ms";
  }

 private:
  static constexpr std::uint32_t kPollsPerWatch = 16;
  Clock::duration timeout_;
  Clock::time_point deadline_;
  std::uint32_t idle_polls_ = 0;
  bool progressed_ = true;  // the first look sets the deadline
};

}  // namespace earlybird
