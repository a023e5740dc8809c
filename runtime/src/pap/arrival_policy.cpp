#include "arrival_policy.hpp"

#include <earlybird/collectives/allreduce.hpp>
#include <earlybird/collectives/pap.hpp>

#include <algorithm>
#include <array>
#include <numeric>

namespace earlybird::pap {
namespace {

// The allreduce catalogue entry of that name, as a Decision::algorithm.
std::uint32_t index_of(std::string_view name) {
  const auto list = coll::allreduce_algorithms();
  const coll::Algorithm* found = coll::find_allreduce(name);
  return static_cast<std::uint32_t>(found - list.data());
}

std::vector<int> rank_order(std::size_t ranks) {
  std::vector<int> order(ranks);
  std::iota(order.begin(), order.end(), 0);
  return order;
}

// Only the pre-reduced ring takes pre-steps from the estimates.
Decision bound_by_estimates(std::string_view algorithm, const EstimatedOrder& estimated, const Timing& timing) {
  Decision d;
  d.algorithm = index_of(algorithm);
  d.order = estimated.order;
  if (algorithm == "pre_reduced_ring") d.presteps = coll::prr_presteps(estimated.arrival_us, timing.tau_us);
  return d;
}

Decision in_rank_order(std::string_view algorithm, std::size_t ranks) {
  Decision d;
  d.algorithm = index_of(algorithm);
  d.order = rank_order(ranks);
  return d;
}

// auto_pap: with every estimate, a balanced spread (within one ring step)
// runs `balanced` (the model's fastest static schedule: where no order
// pays, what auto runs), a spread beyond a whole balanced ring the sorted linear
// tree (a late rank then only reduces and forwards), anything between the
// pre-reduced ring; without every estimate, the last epoch's arrival spread
// picks `balanced` or the ticket-ordered chain. Over nodes the estimate
// orders would split the nodes: an unbalanced spread runs the ticket-ordered
// chain, which keeps them whole (arrival_positions).
Decision choose_auto(const Observations& seen, const Timing& timing, std::string_view balanced) {
  const std::size_t ranks = seen.estimates.size();
  const EstimatedOrder estimated = order_by_estimate(seen.estimates);
  const bool over_nodes = seen.node_ranks > 1 && static_cast<std::size_t>(seen.node_ranks) < ranks;
  if (estimated.complete) {
    const double spread = spread_us(seen.estimates);
    if (spread <= timing.tau_us) return in_rank_order(balanced, ranks);
    if (over_nodes) return in_rank_order("arrival_chain", ranks);
    if (spread > timing.ring_us) return bound_by_estimates("sorted_linear_tree", estimated, timing);
    return bound_by_estimates("pre_reduced_ring", estimated, timing);
  }
  const bool history = std::all_of(seen.previous_arrivals.begin(), seen.previous_arrivals.end(),
                                    [](const auto& t) { return t.has_value(); });
  if (history && spread_us(seen.previous_arrivals) > timing.ring_us)
    return in_rank_order("arrival_chain", ranks);
  return in_rank_order(balanced, ranks);
}

}  // namespace

const coll::Algorithm& decided_algorithm(const Decision& decision) {
  return coll::allreduce_algorithms()[decision.algorithm];
}

bool arrival_ordered(const coll::Algorithm& algorithm) { return algorithm.arrival != coll::ArrivalOrder::none; }

EstimatedOrder order_by_estimate(std::span<const std::optional<std::int64_t>> estimates) {
  EstimatedOrder out;
  const std::size_t ranks = estimates.size();
  std::optional<std::int64_t> latest;
  for (const auto& e : estimates)
    if (e && (!latest || *e > *latest)) latest = e;
  out.complete = std::all_of(estimates.begin(), estimates.end(), [](const auto& e) { return e.has_value(); });
  out.order = rank_order(ranks);
  if (!latest) {  // nothing known: rank order, everyone "at once"
    out.arrival_us.assign(ranks, 0.0);
    return out;
  }
  // Missing estimates sort after every known one, among themselves by rank.
  auto key = [&](int r) {
    const auto& e = estimates[static_cast<std::size_t>(r)];
    return std::pair<int, std::int64_t>(e ? 0 : 1, e ? *e : 0);
  };
  std::stable_sort(out.order.begin(), out.order.end(), [&](int a, int b) { return key(a) < key(b); });
  for (int r : out.order) {
    const auto& e = estimates[static_cast<std::size_t>(r)];
    out.arrival_us.push_back(static_cast<double>(e ? *e : *latest));
  }
  return out;
}

namespace {

// Where exactly one of `members` (ranks of `pool`) is missing, appends it.
void append_the_one_left(std::vector<int>& members, const std::vector<int>& pool) {
  if (members.size() + 1 != pool.size()) return;
  for (int r : pool)
    if (std::find(members.begin(), members.end(), r) == members.end()) {
      members.push_back(r);
      return;
    }
}

std::vector<int> ranks_from(int first, int count) {
  std::vector<int> ranks(static_cast<std::size_t>(count));
  std::iota(ranks.begin(), ranks.end(), first);
  return ranks;
}

}  // namespace

std::vector<int> arrival_positions(std::span<const int> holders, int node_ranks) {
  const int ranks = static_cast<int>(holders.size());
  if (node_ranks <= 1 || node_ranks >= ranks || ranks % node_ranks != 0) {
    // One node: virtual rank t is ticket t; the one rank still away holds
    // the one ticket left.
    std::vector<int> by_virtual(holders.begin(), holders.end());
    const auto away = std::find(by_virtual.begin(), by_virtual.end(), -1);
    if (std::count(away, by_virtual.end(), -1) != 1) return by_virtual;
    std::vector<int> known;
    for (int r : holders)
      if (r >= 0) known.push_back(r);
    append_the_one_left(known, ranks_from(0, ranks));
    *away = known.back();
    return by_virtual;
  }
  const int n = node_ranks, nodes = ranks / node_ranks;
  // Each node's ranks among the tickets known without a gap, in ticket
  // order, and the nodes complete there, in the order they completed.
  std::vector<std::vector<int>> arrived(static_cast<std::size_t>(nodes));
  std::vector<int> placed;
  for (int t = 0; t < ranks && holders[static_cast<std::size_t>(t)] >= 0; ++t) {
    const int r = holders[static_cast<std::size_t>(t)];
    auto& members = arrived[static_cast<std::size_t>(r / n)];
    members.push_back(r);
    if (static_cast<int>(members.size()) == n) placed.push_back(r / n);
  }
  append_the_one_left(placed, ranks_from(0, nodes));
  std::vector<int> by_virtual(holders.size(), -1);
  for (std::size_t slot = 0; slot < placed.size(); ++slot) {
    auto& members = arrived[static_cast<std::size_t>(placed[slot])];
    append_the_one_left(members, ranks_from(placed[slot] * n, n));
    for (std::size_t position = 0; position < members.size(); ++position)
      by_virtual[slot * static_cast<std::size_t>(n) + position] = members[position];
  }
  return by_virtual;
}

double spread_us(std::span<const std::optional<std::int64_t>> times) {
  std::optional<std::int64_t> low, high;
  for (const auto& t : times) {
    if (!t) continue;
    low = low ? std::min(*low, *t) : *t;
    high = high ? std::max(*high, *t) : *t;
  }
  return low && high ? static_cast<double>(*high - *low) : 0.0;
}

Decision decide(const coll::Algorithm& requested, const Observations& seen, const Timing& timing,
                std::string_view balanced) {
  const std::size_t ranks = seen.estimates.size();
  switch (requested.arrival) {
    case coll::ArrivalOrder::estimated:
      return bound_by_estimates(requested.name, order_by_estimate(seen.estimates), timing);
    case coll::ArrivalOrder::ticket: return in_rank_order(requested.name, ranks);
    case coll::ArrivalOrder::chosen: return choose_auto(seen, timing, balanced);
    case coll::ArrivalOrder::none: break;
  }
  return in_rank_order("ring", ranks);
}

}  // namespace earlybird::pap
