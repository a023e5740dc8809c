// Binding: which rank stands at each virtual rank of the plan an Operation
// runs, and — for arrival-ordered collectives — which plan that is. The
// executor asks only this interface; where the answers come from (a root, an
// arrival decision, arrival tickets) lives with whoever made the binding.
//
// state       decided()  bound()  rank_of(v)
// deciding    false      false    not asked (the plan is not known yet)
// binding     true       false    a rank, or -1 while v has not arrived
// bound       true       true     a rank for every v
//
// A static binding (every collective that is not arrival-ordered) starts
// bound. Drive holder only (exec/driver.hpp), except decided_plan()/rank_of()
// after bound.
#pragma once

#include <earlybird/collectives/plan.hpp>

#include <memory>
#include <string>

namespace earlybird {

class Binding {
 public:
  virtual ~Binding() = default;
  // The operation starts (it exchanges data with peers). Returns decided().
  virtual bool begin() { return true; }
  // Learns what is still unknown (the decision, ranks that arrived since).
  // Returns whether anything new was learnt. Cheap to call when bound.
  virtual bool refresh() { return false; }
  virtual bool decided() const { return true; }
  virtual bool bound() const { return true; }
  // The plan to run once decided; nullptr: the plan the operation was made with.
  virtual std::shared_ptr<const coll::RankPlan> decided_plan() { return nullptr; }
  // The rank at virtual rank `v`; -1 while unknown.
  virtual int rank_of(int virtual_rank) const = 0;
  // Why the operation cannot start yet, for the watchdog's message.
  virtual std::string undecided_reason() const { return ""; }
  // Called once when the operation finished successfully.
  virtual void finished() {}
};

// Schedules are written for root 0: v -> (v + root) mod P serves every root.
class StaticBinding final : public Binding {
 public:
  StaticBinding(int ranks, int root) : ranks_(ranks), root_(root) {}
  int rank_of(int virtual_rank) const override { return (virtual_rank + root_) % ranks_; }

 private:
  int ranks_;
  int root_;
};

}  // namespace earlybird
