// ArrivalEntry: how one arrival-ordered operation learns, on the progress
// thread, which schedule it runs and where its virtual ranks are.
//
// state        does                                          next
// (start)      take a ticket (fetch-add at rank 0), record   deciding | bound
//              arrival; ticket 0 decides and publishes
// deciding     read the decision of this epoch (not ticket 0) bound
// bound        ranks of virtual ranks: decision order, or    -
//              ticket holders learnt as they arrive
//
// Ticket binding: virtual rank id is the rank holding ticket id. A rank learns
// holders by reading the board; when every ticket but one is taken, the
// remaining rank is the last holder even before it arrives, so a long-delayed
// rank gets its predecessor's data put into its window while it is away.
#pragma once

#include "arrival_board.hpp"
#include "arrival_policy.hpp"

#include <cstdint>
#include <optional>
#include <vector>

namespace earlybird::pap {

class ArrivalEntry {
 public:
  struct Setup {
    Requested requested = Requested::arrival_chain;
    std::uint64_t call = 0;   // n-th collective call on the communicator (estimates are per call)
    std::int64_t arrival_us = 0;  // when the user called, global time
    Timing timing;
    bool verbose = false;  // the decider logs its decision (EARLYBIRD_VERBOSE=1)
  };
  ArrivalEntry(ArrivalBoard& board, int rank, int ranks, Setup setup);

  // Entry into the `epoch`-th arrival-ordered operation on the communicator:
  // takes the ticket; the first arrival decides. Returns whether bound.
  bool begin(std::uint64_t epoch);
  // Reads the decision if still missing. Returns whether bound.
  bool poll();
  bool bound() const { return decision_.has_value(); }

  Runnable runnable() const { return static_cast<Runnable>(decision_->algorithm); }
  const std::vector<std::uint32_t>& presteps() const { return decision_->presteps; }
  int ticket() const { return ticket_; }
  int virtual_rank() const { return virtual_rank_; }
  // Virtual rank -> rank, -1 where not yet known (ticket binding only).
  const std::vector<int>& ranks_by_virtual() const { return by_virtual_; }
  // Ticket binding: looks at the board again. Returns whether anything new was learnt.
  bool learn_holders();

 private:
  void bind();
  void log_decision(const Observations& seen) const;
  ArrivalBoard* board_;
  int rank_;
  int ranks_;
  Setup setup_;
  std::uint64_t epoch_ = 0;
  int ticket_ = -1;
  int virtual_rank_ = -1;
  std::optional<Decision> decision_;
  std::vector<int> by_virtual_;
};

}  // namespace earlybird::pap
