// Arrival policy: what an arrival-ordered allreduce runs in one epoch, decided
// by the first rank to arrive (ticket 0) from what it sees on the arrival
// board, and published there for every other rank (so all build the same
// schedule; the others never decide anything themselves). Pure logic.
//
// Requested algorithm   binding            decision
// sorted_linear_tree    estimates          order = ranks by estimate
// pre_reduced_ring      estimates          order by estimate, k = prr_presteps(order, tau)
// arrival_chain         tickets            - (true arrival order)
// arrival_prr           tickets            - (k = presteps_last_late)
// auto_pap              see choose_auto    ring / pre_reduced_ring / sorted_linear_tree / arrival_chain
//
// Missing estimates (a rank never called edge(), or called it too late for
// this decision): known estimates first, by (estimate, rank); the missing
// ranks after them in rank order, treated as arriving with the latest known
// estimate; none known: rank order and k = 0. Late estimates are ignored by
// the epoch they missed. Never a wait, so never a deadlock; always one
// decision, so never two schedules.
#pragma once

#include "arrival_board.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace earlybird::pap {

// What an epoch can run; the index is Decision::algorithm on the board.
enum class Runnable : std::uint32_t { ring, sorted_linear_tree, pre_reduced_ring, arrival_chain, arrival_prr };
constexpr std::uint32_t kRunnableCount = 5;
std::string_view catalogue_name(Runnable runnable);
// True for the algorithms bound to ticket order rather than to Decision::order.
bool bound_by_tickets(Runnable runnable);

// The requested (catalogue) algorithm, or nullopt when it is not arrival-ordered.
enum class Requested : std::uint8_t { sorted_linear_tree, pre_reduced_ring, arrival_chain, arrival_prr, auto_pap };
std::optional<Requested> requested_from_name(std::string_view name);
// Whether `name` names an algorithm that needs the arrival board.
bool arrival_ordered(std::string_view name);

struct Timing {
  double tau_us = 0;   // one ring step of this collective (alpha + chunk * (beta + gamma))
  double ring_us = 0;  // a balanced ring: 2 (P - 1) tau
};

struct Observations {
  std::vector<std::optional<std::int64_t>> estimates;          // by rank, global us
  std::vector<std::optional<std::int64_t>> previous_arrivals;  // by rank, last epoch
};

Decision decide(Requested requested, const Observations& seen, const Timing& timing);

// Ranks ordered by estimate as described above, with the arrival time each
// is treated as having (ascending).
struct EstimatedOrder {
  std::vector<int> order;
  std::vector<double> arrival_us;
  bool complete = false;  // every rank had an estimate
};
EstimatedOrder order_by_estimate(std::span<const std::optional<std::int64_t>> estimates);

// max - min of the known values; 0 with fewer than two.
double spread_us(std::span<const std::optional<std::int64_t>> times);

}  // namespace earlybird::pap
