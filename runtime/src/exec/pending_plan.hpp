// PendingPlan: a rank's plan that may still be being built elsewhere. The
// progress thread never builds a plan: one with thousands of segments takes
// seconds, during which no flag would be polled and no watchdog would fire.
// An arrival-ordered operation learns its algorithm and position only when it
// starts, so its plan comes as a PendingPlan the drive holder polls.
//
// state     ready()  get()
// building  false    not asked
// built     true     the plan
// failed    true     rethrows why the plan could not be made
#pragma once

#include <earlybird/collectives/plan.hpp>

#include <atomic>
#include <exception>
#include <memory>

namespace earlybird {

class PendingPlan {
 public:
  static std::shared_ptr<PendingPlan> built(std::shared_ptr<const coll::RankPlan> plan) {
    auto pending = std::make_shared<PendingPlan>();
    pending->set(std::move(plan));
    return pending;
  }

  // The builder, once.
  void set(std::shared_ptr<const coll::RankPlan> plan) {
    plan_ = std::move(plan);
    ready_.store(true, std::memory_order_release);
  }
  void set_error(std::exception_ptr error) {
    error_ = error;
    ready_.store(true, std::memory_order_release);
  }

  bool ready() const { return ready_.load(std::memory_order_acquire); }
  // After ready() only.
  std::shared_ptr<const coll::RankPlan> get() const {
    if (error_) std::rethrow_exception(error_);
    return plan_;
  }

 private:
  std::atomic<bool> ready_{false};
  std::shared_ptr<const coll::RankPlan> plan_;
  std::exception_ptr error_;
};

}  // namespace earlybird
