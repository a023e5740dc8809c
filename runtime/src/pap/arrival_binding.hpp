// ArrivalBinding: how one arrival-ordered operation learns, on the progress
// thread, which schedule it runs and which rank stands at each arrival
// position (the Binding the executor asks).
//
// state      does                                            next
// begin      take a ticket (fetch-add at rank 0), record     deciding | placing
//                                                            | binding | bound
//            arrival; ticket 0 decides and publishes
// deciding   read this epoch's decision (ranks other than    planning | binding
//            ticket 0)                                       | bound
// planning   the decided plan is built on a TBB worker       binding | bound
//            (not in the plan cache yet); polled
// placing    ticket-bound over nodes: this rank's arrival    binding | bound
//            position waits for its node's place (nodes
//            kept whole: arrival_positions); learn holders
// binding    ticket-bound: learn holders as they arrive;     bound
//            when all tickets but one are known, the rank
//            without one holds the last (over nodes: the
//            places arrival_positions knows)
// bound      every position has its rank                     -
//
// Estimate-bound algorithms (catalogue `estimated`, and what auto_pap picks
// among them) are bound at once by the decision's order; ticket-bound ones
// (catalogue `ticket`) need no published decision: every rank derives the
// same one, and virtual rank t is the holder of ticket t on one node; over
// nodes, virtual ranks keep nodes whole in the order they filled
// (arrival_positions). Either way the last virtual rank is the last rank to
// arrive, so a long-delayed last rank gets its predecessor's data put into
// its window while it is away.
#pragma once

#include "../exec/binding.hpp"
#include "arrival_policy.hpp"
#include "arrival_session.hpp"

#include <cstdint>
#include <memory>
#include <string_view>
#include <optional>
#include <vector>

namespace earlybird::pap {

class ArrivalBinding final : public Binding {
 public:
  struct Setup {
    const coll::Algorithm* requested = nullptr;  // an allreduce entry with an arrival order
    std::uint64_t call = 0;        // the collective call it belongs to (estimates are per call)
    std::int64_t arrival_us = 0;   // when the user called, global time
    Timing timing;
    std::string_view balanced = "ring";  // decide()'s: a catalogue name (static storage)
    PlanFor plan_for;
  };
  ArrivalBinding(ArrivalSession& session, Setup setup);

  bool begin() override;
  bool refresh() override;
  bool decided() const override { return plan_ != nullptr; }
  bool bound() const override;
  std::shared_ptr<const coll::RankPlan> decided_plan() override;
  int rank_of(int virtual_rank) const override { return by_virtual_[static_cast<std::size_t>(virtual_rank)]; }
  std::string undecided_reason() const override;
  void finished() override;

 private:
  bool needs_published_decision() const { return setup_.requested->arrival != coll::ArrivalOrder::ticket; }
  bool bound_by_tickets() const { return decided_algorithm(*decision_).arrival == coll::ArrivalOrder::ticket; }
  void bind();
  void request_plan();
  void place_by_tickets();
  bool take_plan();
  bool learn_holders();
  std::vector<int> peers_written() const;
  ArrivalDecision as_seen() const;
  void log_decision() const;

  ArrivalSession* session_;
  Setup setup_;
  std::uint64_t epoch_ = 0;
  int ticket_ = -1;
  int virtual_rank_ = -1;
  std::optional<Decision> decision_;
  Observations seen_;  // what the decision was made from (deciding rank only)
  std::vector<int> holders_;     // ticket-bound: the rank holding each ticket, -1 unknown
  std::vector<int> by_virtual_;
  std::shared_ptr<PendingPlan> pending_;  // the decided plan while it is built
  std::shared_ptr<const coll::RankPlan> plan_;
};

}  // namespace earlybird::pap
