// ArrivalBoard: the shared state of arrival-ordered collectives, kept in rank
// 0's window (WindowLayout's board) and reached with RMA atomics.
//
//   ticket counter   one word in the header; every arrival-ordered collective
//                    adds 1 on entry (MPI_Fetch_and_op), so the n-th such
//                    collective hands out tickets n*P ... n*P + P-1, in the
//                    order ranks arrive: ticket = value - n*P.
//   tickets[e%2][t]  the rank holding ticket t of epoch e
//   arrivals[e%2][r] rank r's arrival (global time) in epoch e
//   decision[e%2]    [header, P entries]: the schedule chosen for epoch e by
//                    the first rank to arrive (see arrival_policy.hpp)
//   estimates[c%2][r] rank r's estimated arrival at its c-th collective call
//                    on the communicator (of any kind), published by edge()
//
// Every word is tag | payload: the tag (24 bits) is the epoch (or call)
// number + 1, so a reader tells this epoch's words from old ones; the payload
// has 40 bits. Epoch e's words are rewritten by epoch e+2 only, which no rank
// starts before every rank finished epoch e (allreduce-like collectives:
// finishing e+1 needs every rank's entry into e+1).
// Drive holder only (the communicator's progress thread or caller).
#pragma once

#include "../rma/transport.hpp"
#include "../rma/window_layout.hpp"

#include <cstdint>
#include <optional>
#include <vector>

namespace earlybird::pap {

constexpr int kTagBits = 24;
constexpr int kPayloadBits = 40;
constexpr std::uint64_t kPayloadMask = (std::uint64_t{1} << kPayloadBits) - 1;
// Decision entries pack (rank, pre-steps) into 40 bits: 20 bits each.
constexpr int kMaxArrivalRanks = 1 << 20;

inline std::uint64_t tag_of(std::uint64_t number) { return (number + 1) & ((std::uint64_t{1} << kTagBits) - 1); }
inline std::uint64_t tagged(std::uint64_t number, std::uint64_t payload) {
  return (tag_of(number) << kPayloadBits) | (payload & kPayloadMask);
}
// The payload of `word` if it carries `number`'s tag.
inline std::optional<std::uint64_t> payload_if(std::uint64_t word, std::uint64_t number) {
  if ((word >> kPayloadBits) != tag_of(number)) return std::nullopt;
  return word & kPayloadMask;
}

// The schedule of one epoch: which algorithm runs, the rank at each arrival
// position (`order[id]`), and PRR's pre-steps by position.
struct Decision {
  std::uint32_t algorithm = 0;  // an index the runtime defines (arrival_policy.hpp)
  std::vector<int> order;
  std::vector<std::uint32_t> presteps;
};

class ArrivalBoard {
 public:
  ArrivalBoard(Transport& transport, const WindowLayout& layout);

  // Entry into epoch `epoch`: this rank's ticket (its arrival position).
  int take_ticket(std::uint64_t epoch);
  // Publishes that this rank holds `ticket` and arrived at `arrival_us`
  // (Transport::post_remote_words: over the point-to-point transport it
  // returns before rank 0 has them; readers poll, and a missing arrival time
  // only counts as unknown).
  void record_arrival(std::uint64_t epoch, int ticket, std::int64_t arrival_us);
  // Holder of every ticket of `epoch` known so far (-1: not yet taken).
  std::vector<int> ticket_holders(std::uint64_t epoch);
  // Arrival times of `epoch` (global microseconds) where recorded.
  std::vector<std::optional<std::int64_t>> arrivals(std::uint64_t epoch);

  void publish_decision(std::uint64_t epoch, const Decision& decision);
  std::optional<Decision> decision(std::uint64_t epoch);

  void publish_estimate(std::uint64_t call, std::int64_t arrival_us);
  std::vector<std::optional<std::int64_t>> estimates(std::uint64_t call);

 private:
  std::size_t word(std::size_t index) const { return WindowLayout::kBoardOffset + index * sizeof(std::uint64_t); }
  std::size_t estimates_at(std::uint64_t call) const { return (call % 2) * ranks_; }
  std::size_t epoch_base(std::uint64_t epoch) const { return 2 * ranks_ + (epoch % 2) * (3 * ranks_ + 1); }
  std::size_t tickets_at(std::uint64_t epoch) const { return epoch_base(epoch); }
  std::size_t arrivals_at(std::uint64_t epoch) const { return epoch_base(epoch) + ranks_; }
  std::size_t decision_at(std::uint64_t epoch) const { return epoch_base(epoch) + 2 * ranks_; }
  std::vector<std::uint64_t> read(std::size_t index, std::size_t count);
  std::vector<std::optional<std::int64_t>> times(std::size_t index, std::uint64_t number);

  Transport* transport_;
  std::size_t ranks_;
};

}  // namespace earlybird::pap
