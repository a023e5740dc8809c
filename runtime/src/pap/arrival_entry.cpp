#include "arrival_entry.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

namespace earlybird::pap {
namespace {

bool needs_published_decision(Requested requested) {
  return requested != Requested::arrival_chain && requested != Requested::arrival_prr;
}

}  // namespace

ArrivalEntry::ArrivalEntry(ArrivalBoard& board, int rank, int ranks, Setup setup)
    : board_(&board), rank_(rank), ranks_(ranks), setup_(setup) {}

bool ArrivalEntry::begin(std::uint64_t epoch) {
  epoch_ = epoch;
  ticket_ = board_->take_ticket(epoch_);
  board_->record_arrival(epoch_, ticket_, setup_.arrival_us);
  if (!needs_published_decision(setup_.requested)) {
    // Ticket-bound algorithms need nobody's decision: every rank derives the
    // same one.
    decision_ = decide(setup_.requested, Observations{std::vector<std::optional<std::int64_t>>(static_cast<std::size_t>(ranks_)), {}},
                       setup_.timing);
  } else if (ticket_ == 0) {
    Observations seen{board_->estimates(setup_.call),
                      epoch_ == 0 ? std::vector<std::optional<std::int64_t>>(static_cast<std::size_t>(ranks_))
                                  : board_->arrivals(epoch_ - 1)};
    decision_ = decide(setup_.requested, seen, setup_.timing);
    board_->publish_decision(epoch_, *decision_);
    if (setup_.verbose) log_decision(seen);
  }
  if (decision_) bind();
  return bound();
}

void ArrivalEntry::log_decision(const Observations& seen) const {
  std::string text = "earlybird: arrival decision, epoch " + std::to_string(epoch_) + " (decided by rank " +
                     std::to_string(rank_) + ", tau " + std::to_string(static_cast<long long>(setup_.timing.tau_us)) +
                     " us): " + std::string(catalogue_name(runnable())) + ", order";
  for (int r : decision_->order) text += " " + std::to_string(r);
  text += ", pre-steps";
  for (auto k : decision_->presteps) text += " " + std::to_string(k);
  text += ", estimate spread " + std::to_string(static_cast<long long>(spread_us(seen.estimates))) + " us";
  text += ", estimates (call " + std::to_string(setup_.call) + ", us since this call's decider arrived):";
  for (const auto& e : seen.estimates) text += e ? " " + std::to_string(*e - setup_.arrival_us) : std::string(" -");
  std::fprintf(stderr, "%s\n", text.c_str());
}

bool ArrivalEntry::poll() {
  if (bound()) return true;
  decision_ = board_->decision(epoch_);
  if (decision_) bind();
  return bound();
}

void ArrivalEntry::bind() {
  if (!bound_by_tickets(runnable())) {
    by_virtual_ = decision_->order;
    virtual_rank_ = static_cast<int>(std::find(by_virtual_.begin(), by_virtual_.end(), rank_) - by_virtual_.begin());
    return;
  }
  by_virtual_.assign(static_cast<std::size_t>(ranks_), -1);
  by_virtual_[static_cast<std::size_t>(ticket_)] = rank_;
  virtual_rank_ = ticket_;
}

bool ArrivalEntry::learn_holders() {
  const auto missing = [&] { return std::count(by_virtual_.begin(), by_virtual_.end(), -1); };
  const auto before = missing();
  if (before == 0) return false;
  const std::vector<int> holders = board_->ticket_holders(epoch_);
  for (std::size_t t = 0; t < holders.size(); ++t)
    if (holders[t] >= 0) by_virtual_[t] = holders[t];
  if (missing() == 1) {
    // The one rank without a ticket yet will hold the one ticket left.
    std::vector<bool> seen(static_cast<std::size_t>(ranks_), false);
    for (int r : by_virtual_)
      if (r >= 0) seen[static_cast<std::size_t>(r)] = true;
    const auto absent = static_cast<int>(std::find(seen.begin(), seen.end(), false) - seen.begin());
    *std::find(by_virtual_.begin(), by_virtual_.end(), -1) = absent;
  }
  return missing() < before;
}

}  // namespace earlybird::pap
