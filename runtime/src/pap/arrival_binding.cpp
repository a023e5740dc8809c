#include "arrival_binding.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

namespace earlybird::pap {
namespace {

std::vector<std::optional<std::int64_t>> unknown_times(int ranks) {
  return std::vector<std::optional<std::int64_t>>(static_cast<std::size_t>(ranks));
}

}  // namespace

ArrivalBinding::ArrivalBinding(ArrivalSession& session, Setup setup)
    : session_(&session), setup_(std::move(setup)) {}

bool ArrivalBinding::begin() {
  ArrivalBoard& board = session_->board();
  const int ranks = session_->size();
  epoch_ = session_->next_epoch();
  ticket_ = board.take_ticket(epoch_);
  board.record_arrival(epoch_, ticket_, setup_.arrival_us);
  if (!needs_published_decision()) {
    decision_ = decide(*setup_.requested, Observations{unknown_times(ranks), {}}, setup_.timing);
  } else if (ticket_ == 0) {
    seen_ = Observations{board.estimates(setup_.call), epoch_ == 0 ? unknown_times(ranks) : board.arrivals(epoch_ - 1),
                         session_->node_ranks()};
    decision_ = decide(*setup_.requested, seen_, setup_.timing, setup_.balanced);
    board.publish_decision(epoch_, *decision_);
    if (session_->verbose()) log_decision();
  }
  if (decision_) bind();
  return decided();
}

bool ArrivalBinding::refresh() {
  if (!decision_) {
    decision_ = session_->board().decision(epoch_);
    if (!decision_) return false;
    bind();
    return true;
  }
  if (virtual_rank_ < 0) {  // ticket-bound over nodes: this rank's place waits for arrivals
    const bool learnt = learn_holders();
    if (virtual_rank_ >= 0) request_plan();
    return learnt;
  }
  if (!plan_) return take_plan();
  return learn_holders();
}

bool ArrivalBinding::bound() const {
  return decided() && std::find(by_virtual_.begin(), by_virtual_.end(), -1) == by_virtual_.end();
}

std::string ArrivalBinding::undecided_reason() const {
  if (!decision_) return "the first rank to arrive published no schedule decision";
  if (virtual_rank_ < 0) {
    std::string away;
    for (int r = 0; r < session_->size(); ++r)
      if (std::find(holders_.begin(), holders_.end(), r) == holders_.end()) away += " " + std::to_string(r);
    return "its arrival position (nodes kept whole, in the order they fill) waits for ranks" + away + " to arrive";
  }
  return "the schedule of " + std::string(decided_algorithm(*decision_).name) + " for arrival position " +
         std::to_string(virtual_rank_) + " was not built";
}

void ArrivalBinding::bind() {
  if (!bound_by_tickets()) {
    by_virtual_ = decision_->order;
    virtual_rank_ = static_cast<int>(std::find(by_virtual_.begin(), by_virtual_.end(), session_->rank()) -
                                     by_virtual_.begin());
  } else {
    holders_.assign(static_cast<std::size_t>(session_->size()), -1);
    holders_[static_cast<std::size_t>(ticket_)] = session_->rank();
    place_by_tickets();
    if (virtual_rank_ < 0) learn_holders();  // over nodes: the place may be known from earlier arrivals
  }
  if (virtual_rank_ >= 0) request_plan();
}

void ArrivalBinding::request_plan() {
  // Pre-steps matter to the pre-reduced ring only; other plans share a cache entry.
  static const std::vector<std::uint32_t> kNone;
  const coll::Algorithm& algorithm = decided_algorithm(*decision_);
  pending_ = setup_.plan_for(algorithm, virtual_rank_, algorithm.name == "pre_reduced_ring" ? decision_->presteps : kNone);
  take_plan();
}

// Ticket binding: the ranks at the arrival positions known so far
// (arrival_positions: over nodes, nodes kept whole), this rank's among them.
void ArrivalBinding::place_by_tickets() {
  by_virtual_ = arrival_positions(holders_, session_->node_ranks());
  const auto mine = std::find(by_virtual_.begin(), by_virtual_.end(), session_->rank());
  virtual_rank_ = mine == by_virtual_.end() ? -1 : static_cast<int>(mine - by_virtual_.begin());
}

// Takes the decided plan once it is built; rethrows why it could not be.
bool ArrivalBinding::take_plan() {
  if (!pending_->ready()) return false;
  plan_ = pending_->get();
  pending_.reset();
  return true;
}

std::shared_ptr<const coll::RankPlan> ArrivalBinding::decided_plan() { return plan_; }

// Ticket binding: reads the holders again (one remote read).
bool ArrivalBinding::learn_holders() {
  const auto missing = [&] { return std::count(by_virtual_.begin(), by_virtual_.end(), -1); };
  const auto before = missing();
  if (before == 0) return false;
  const std::vector<int> holders = session_->board().ticket_holders(epoch_);
  for (std::size_t t = 0; t < holders.size(); ++t)
    if (holders[t] >= 0) holders_[t] = holders[t];
  place_by_tickets();
  return missing() < before;
}

// The ranks this rank wrote to (data or notifications): the next
// arrival-ordered collective's foreseen peers, which edge() warms up.
std::vector<int> ArrivalBinding::peers_written() const {
  std::vector<int> peers;
  auto add = [&](int virtual_peer) {
    if (rank_of(virtual_peer) >= 0) peers.push_back(rank_of(virtual_peer));
  };
  for (const coll::PlanStep& s : plan_->steps) {
    if (s.kind == coll::StepKind::put) add(s.peer);
    for (std::uint32_t n = s.note_begin; n < s.note_end; ++n) add(plan_->notes[n].target);
  }
  std::sort(peers.begin(), peers.end());
  peers.erase(std::unique(peers.begin(), peers.end()), peers.end());
  return peers;
}

ArrivalDecision ArrivalBinding::as_seen() const {
  ArrivalDecision d;
  d.algorithm = std::string(decided_algorithm(*decision_).name);
  d.order = by_virtual_;
  if (d.algorithm == "pre_reduced_ring") d.presteps = decision_->presteps;
  d.decided_here = ticket_ == 0 && needs_published_decision();
  if (d.decided_here) d.estimates = seen_.estimates;
  return d;
}

void ArrivalBinding::finished() { session_->bound_and_finished(peers_written(), as_seen()); }

void ArrivalBinding::log_decision() const {
  std::string text = "earlybird: arrival decision, epoch " + std::to_string(epoch_) + " (decided by rank " +
                     std::to_string(session_->rank()) + ", tau " +
                     std::to_string(static_cast<long long>(setup_.timing.tau_us)) +
                     " us): " + std::string(decided_algorithm(*decision_).name) + ", order";
  for (int r : decision_->order) text += " " + std::to_string(r);
  text += ", pre-steps";
  for (auto k : decision_->presteps) text += " " + std::to_string(k);
  text += ", estimate spread " + std::to_string(static_cast<long long>(spread_us(seen_.estimates))) + " us";
  text += ", estimates (call " + std::to_string(setup_.call) + ", us since this call's decider arrived):";
  for (const auto& e : seen_.estimates) text += e ? " " + std::to_string(*e - setup_.arrival_us) : std::string(" -");
  std::fprintf(stderr, "%s\n", text.c_str());
}

}  // namespace earlybird::pap
