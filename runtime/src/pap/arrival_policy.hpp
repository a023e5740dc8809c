// Arrival policy: what an arrival-ordered allreduce runs in one epoch, decided
// by the first rank to arrive (ticket 0) from what it sees on the arrival
// board, and published there for every other rank (so all build the same
// schedule; the others never decide anything themselves). Pure logic.
//
// requested (arrival)          decision
// sorted_linear_tree (estimated) order = ranks by estimate
// pre_reduced_ring (estimated)   order by estimate, k = prr_presteps(order, tau)
// arrival_chain (ticket)         rank order (virtual rank = ticket: true arrival order)
// arrival_prr (ticket)           rank order (k = presteps_all_ahead)
// arrival_greedy (ticket)        rank order (the last ticket joins last)
// auto_pap (chosen)              balanced / pre_reduced_ring / sorted_linear_tree / arrival_chain
//                                (over nodes: balanced / arrival_chain, whose ticket order keeps nodes whole);
//                                balanced: the model's fastest static schedule for the call (rank order);
//                                a call whose static choice costs less than the board never comes here:
//                                it runs that choice (config::arrival_stand_in)
//
// Missing estimates (a rank never called edge(), or called it too late for
// this decision): known estimates first, by (estimate, rank); the missing
// ranks after them in rank order, treated as arriving with the latest known
// estimate; none known: rank order and k = 0. Late estimates are ignored by
// the epoch they missed. Never a wait, so never a deadlock; always one
// decision, so never two schedules.
#pragma once

#include "arrival_board.hpp"

#include <earlybird/collectives/catalogue.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace earlybird::pap {

// The catalogue (coll::Algorithm::arrival) says what each allreduce needs:
// `estimated` entries run in the order of the estimates, `ticket` entries in
// true arrival order, `chosen` (auto_pap) is decided here. Decision::algorithm
// is an index into the allreduce catalogue.
const coll::Algorithm& decided_algorithm(const Decision& decision);
// Whether `algorithm` needs the arrival board (any arrival order but none).
bool arrival_ordered(const coll::Algorithm& algorithm);

struct Timing {
  double tau_us = 0;   // one ring step of this collective (alpha + chunk * (beta + gamma))
  double ring_us = 0;  // a balanced ring: 2 (P - 1) tau
};

struct Observations {
  std::vector<std::optional<std::int64_t>> estimates;          // by rank, global us
  std::vector<std::optional<std::int64_t>> previous_arrivals;  // by rank, last epoch
  int node_ranks = 0;  // Transport::node_ranks: over nodes, estimate orders would split them
};

// `requested`: an allreduce catalogue entry with an arrival order.
// `balanced`: what auto_pap runs when arrival order buys nothing (the
// model's fastest static schedule for the call: config::fastest_schedule).
Decision decide(const coll::Algorithm& requested, const Observations& seen, const Timing& timing,
                std::string_view balanced = "ring");

// Ranks ordered by estimate as described above, with the arrival time each
// is treated as having (ascending).
struct EstimatedOrder {
  std::vector<int> order;
  std::vector<double> arrival_us;
  bool complete = false;  // every rank had an estimate
};
EstimatedOrder order_by_estimate(std::span<const std::optional<std::int64_t>> estimates);

// The arrival positions of a ticket-bound collective: `holders[t]` is the
// rank holding ticket t (-1: not known yet); returns the rank at each
// virtual rank (-1: not known yet). On one node (node_ranks 0, 1 or P, or
// nodes that do not divide P) virtual rank t is ticket t, and the last one
// is known by elimination. Over nodes of node_ranks consecutive ranks, nodes
// stay whole: they come in the order their last rank arrived, and a node's
// ranks in the order they arrived, so the last virtual rank is still the
// last rank to arrive, and a schedule in arrival order (a chain, a ring)
// crosses between nodes N - 1 (N) times instead of at nearly every step. A
// node's place is known once it and every node before it are complete among
// the tickets known without a gap, or when it is the one node left; a
// rank's place once its node is placed and it holds one of those tickets,
// or it is the one rank of its node left. Once known, a place never changes.
std::vector<int> arrival_positions(std::span<const int> holders, int node_ranks);

// max - min of the known values; 0 with fewer than two.
double spread_us(std::span<const std::optional<std::int64_t>> times);

}  // namespace earlybird::pap
