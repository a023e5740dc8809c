// The arrival policy, board, session and bindings (runtime/src/pap): who
// decides, what they decide from estimates (complete, partial, none) and
// history, the binding protocol on the in-process transport (one thread
// playing every rank in a chosen arrival order), and last_decision().
#include <doctest/doctest.h>

#include "pap/arrival_board.hpp"
#include "pap/arrival_policy.hpp"
#include "pap/arrival_session.hpp"
#include "rma/inproc_transport.hpp"

#include <earlybird/collectives/allreduce.hpp>
#include <earlybird/collectives/pap.hpp>
#include <earlybird/error.hpp>

#include <algorithm>
#include <numeric>
#include <random>
#include <utility>
#include <memory>
#include <string>
#include <string_view>
#include <optional>
#include <vector>

using namespace earlybird;
using namespace earlybird::pap;

namespace {

using Times = std::vector<std::optional<std::int64_t>>;

Timing timing_of(double tau_us, int ranks) { return Timing{tau_us, 2.0 * (ranks - 1) * tau_us}; }

// One in-process "world" of `ranks` arrival sessions, driven from this thread
// (the progress thread of every rank at once).
struct Sessions {
  explicit Sessions(int ranks, int node_ranks = 0) {
    layout.ranks = ranks;
    layout.flags_per_lane = 8;
    layout.scratch_bytes = 64;
    fabric = std::make_shared<InProcFabric>(ranks, layout.window_size(), node_ranks);
    for (int r = 0; r < ranks; ++r) {
      transports.push_back(std::make_unique<InProcTransport>(fabric, r));
      sessions.push_back(std::make_unique<ArrivalSession>(*transports.back(), layout, false));
    }
  }
  ArrivalSession& operator[](int rank) { return *sessions[static_cast<std::size_t>(rank)]; }
  ArrivalBoard& board(int rank) { return (*this)[rank].board(); }
  // Rank `rank`'s binding for a call of `algorithm`; plans are real
  // projections, built at once unless `plan_for` says otherwise.
  std::unique_ptr<Binding> binding(int rank, std::string_view algorithm, std::uint64_t call = 0,
                                   PlanFor plan_for = nullptr) {
    const int ranks = layout.ranks;
    if (!plan_for)
      plan_for = [ranks](const coll::Algorithm& a, int virtual_rank, const std::vector<std::uint32_t>& presteps) {
        return PendingPlan::built(projection(a, ranks, virtual_rank, presteps));
      };
    return (*this)[rank].binding(*coll::find_allreduce(algorithm), call, 1000 * rank, 4 * 64, "ring", plan_for);
  }
  static std::shared_ptr<const coll::RankPlan> projection(const coll::Algorithm& a, int ranks, int virtual_rank,
                                                          const std::vector<std::uint32_t>& presteps = {}) {
    coll::AlgorithmParams params;
    params.presteps = presteps;
    return std::make_shared<const coll::RankPlan>(coll::project(a.make(ranks, 64, params, 4), virtual_rank));
  }
  // Every rank's binding, begun in `arrivals` order (ranks), then refreshed.
  std::vector<std::unique_ptr<Binding>> enter(std::string_view algorithm, const std::vector<int>& arrivals,
                                              std::uint64_t call = 0) {
    std::vector<std::unique_ptr<Binding>> bindings(static_cast<std::size_t>(layout.ranks));
    for (int r = 0; r < layout.ranks; ++r) bindings[static_cast<std::size_t>(r)] = binding(r, algorithm, call);
    for (int r : arrivals) bindings[static_cast<std::size_t>(r)]->begin();
    for (auto& b : bindings) b->refresh();
    return bindings;
  }
  WindowLayout layout;
  std::shared_ptr<InProcFabric> fabric;
  std::vector<std::unique_ptr<InProcTransport>> transports;
  std::vector<std::unique_ptr<ArrivalSession>> sessions;
};

std::vector<int> order_of(const Binding& binding, int ranks) {
  std::vector<int> order;
  for (int v = 0; v < ranks; ++v) order.push_back(binding.rank_of(v));
  return order;
}

std::vector<int> reversed_ranks(int ranks) {
  std::vector<int> order;
  for (int r = ranks - 1; r >= 0; --r) order.push_back(r);
  return order;
}

}  // namespace

TEST_CASE("board words: a tag tells this epoch's words from older ones") {
  CHECK(payload_if(tagged(5, 1234), 5) == std::optional<std::uint64_t>(1234));
  CHECK_FALSE(payload_if(tagged(5, 1234), 3).has_value());
  CHECK_FALSE(payload_if(0, 0).has_value());  // a zeroed window holds no epoch 0 word
  CHECK(payload_if(tagged(7, kPayloadMask), 7) == std::optional<std::uint64_t>(kPayloadMask));
}

TEST_CASE("order by estimate: complete, partly missing, none") {
  const EstimatedOrder all = order_by_estimate(Times{300, 100, 200, 100});
  CHECK(all.complete);
  CHECK(all.order == std::vector<int>{1, 3, 2, 0});  // ties by rank
  CHECK(all.arrival_us == std::vector<double>{100, 100, 200, 300});

  const EstimatedOrder some = order_by_estimate(Times{std::nullopt, 500, std::nullopt, 100});
  CHECK_FALSE(some.complete);
  CHECK(some.order == std::vector<int>{3, 1, 0, 2});  // missing last, by rank
  CHECK(some.arrival_us == std::vector<double>{100, 500, 500, 500});

  const EstimatedOrder none = order_by_estimate(Times(3));
  CHECK(none.order == std::vector<int>{0, 1, 2});
  CHECK(none.arrival_us == std::vector<double>{0, 0, 0});
}

std::string_view name_of(const Decision& decision) { return decided_algorithm(decision).name; }

TEST_CASE("decide: estimate-bound algorithms follow the estimates, PRR's k is the recurrence's") {
  const Times estimates{0, 900, 10, 20};
  const Timing timing = timing_of(100, 4);
  const Decision slt = decide(*coll::find_allreduce("sorted_linear_tree"), {estimates, {}}, timing);
  CHECK(name_of(slt) == "sorted_linear_tree");
  CHECK(slt.order == std::vector<int>{0, 2, 3, 1});
  CHECK(slt.presteps.empty());

  const Decision prr = decide(*coll::find_allreduce("pre_reduced_ring"), {estimates, {}}, timing);
  CHECK(name_of(prr) == "pre_reduced_ring");
  CHECK(prr.order == slt.order);
  const std::vector<double> sorted{0, 10, 20, 900};
  CHECK(prr.presteps == coll::prr_presteps(sorted, 100));

  // No estimates at all: rank order and no pre-steps, on whoever decides.
  const Decision fallback = decide(*coll::find_allreduce("pre_reduced_ring"), {Times(4), {}}, timing);
  CHECK(fallback.order == std::vector<int>{0, 1, 2, 3});
  CHECK(fallback.presteps == std::vector<std::uint32_t>(4, 0));

  // Ticket-bound algorithms decide nothing: rank order stands for "by ticket".
  const Decision chain = decide(*coll::find_allreduce("arrival_chain"), {estimates, {}}, timing);
  CHECK(name_of(chain) == "arrival_chain");
  CHECK(chain.order == std::vector<int>{0, 1, 2, 3});
}

TEST_CASE("the catalogue says which allreduce entries are arrival-ordered") {
  std::vector<std::string> ordered;
  for (const coll::Algorithm& a : coll::allreduce_algorithms())
    if (arrival_ordered(a)) ordered.emplace_back(a.name);
  CHECK(ordered == std::vector<std::string>{"sorted_linear_tree", "pre_reduced_ring", "arrival_chain", "arrival_prr",
                                            "arrival_greedy", "auto_pap"});
}

TEST_CASE("auto_pap: the balanced choice when balanced, PRR in between, SLT beyond a ring, the ticket chain from "
          "history") {
  const Timing timing = timing_of(100, 4);  // tau 100 us, balanced ring 600 us
  // `balanced`: the model's fastest static schedule, given by the caller.
  const char* balanced = "rabenseifner";
  auto chosen = [&](const Times& estimates, const Times& previous) {
    return std::string(name_of(decide(*coll::find_allreduce("auto_pap"), {estimates, previous}, timing, balanced)));
  };
  CHECK(chosen({0, 50, 20, 90}, {}) == balanced);
  CHECK(chosen({0, 300, 20, 90}, {}) == "pre_reduced_ring");
  CHECK(chosen({0, 50000, 20, 90}, {}) == "sorted_linear_tree");
  // Without every estimate the previous epoch's arrivals decide.
  CHECK(chosen({0, std::nullopt, 0, 0}, {0, 90000, 10, 5}) == "arrival_chain");
  CHECK(chosen({0, std::nullopt, 0, 0}, {0, 90, 10, 5}) == balanced);
  CHECK(chosen(Times(4), Times(4)) == balanced);
  // The balanced choice runs in rank order.
  CHECK(decide(*coll::find_allreduce("auto_pap"), {{0, 50, 20, 90}, {}}, timing, balanced).order ==
        std::vector<int>{0, 1, 2, 3});
  // Without one given: the ring.
  CHECK(name_of(decide(*coll::find_allreduce("auto_pap"), {Times(4), Times(4)}, timing)) == "ring");
  // Over nodes of 2 the estimate orders would split the nodes: the ticket chain keeps them whole.
  auto over_nodes = [&](const Times& estimates, int node_ranks) {
    return std::string(
        name_of(decide(*coll::find_allreduce("auto_pap"), {estimates, {}, node_ranks}, timing, balanced)));
  };
  CHECK(over_nodes({0, 50, 20, 90}, 2) == balanced);
  CHECK(over_nodes({0, 300, 20, 90}, 2) == "arrival_chain");
  CHECK(over_nodes({0, 50000, 20, 90}, 2) == "arrival_chain");
  CHECK(over_nodes({0, 50000, 20, 90}, 4) == "sorted_linear_tree");  // one node
}

TEST_CASE("binding: tickets follow arrival order, the first arrival decides, everyone reads the same decision") {
  for (int ranks : {1, 2, 3, 5}) {
    CAPTURE(ranks);
    Sessions world(ranks);
    // Arrival order: highest rank first.
    const auto bindings = world.enter("sorted_linear_tree", reversed_ranks(ranks));
    CHECK(world.board(0).ticket_holders(0) == reversed_ranks(ranks));
    for (int r = 0; r < ranks; ++r) {
      const Binding& b = *bindings[static_cast<std::size_t>(r)];
      REQUIRE(b.decided());
      CHECK(b.bound());
      CHECK(order_of(b, ranks) == order_of(*bindings[0], ranks));
    }
    // Epoch 1 uses the other half of the board; tickets restart at 0.
    std::vector<int> in_rank_order;
    for (int r = 0; r < ranks; ++r) in_rank_order.push_back(r);
    world.enter("arrival_chain", in_rank_order, 1);
    CHECK(world.board(0).ticket_holders(1) == in_rank_order);
  }
}

TEST_CASE("binding: ticket binding learns holders as they arrive; the last holder by elimination") {
  const int ranks = 4;
  Sessions world(ranks);
  std::vector<std::unique_ptr<Binding>> b;
  for (int r = 0; r < ranks; ++r) b.push_back(world.binding(r, "arrival_chain"));
  REQUIRE(b[2]->begin());  // ticket 0; no decision to wait for
  CHECK(order_of(*b[2], ranks) == std::vector<int>{2, -1, -1, -1});
  CHECK_FALSE(b[2]->bound());
  CHECK_FALSE(b[2]->refresh());
  b[0]->begin();  // ticket 1
  CHECK(b[2]->refresh());
  CHECK(order_of(*b[2], ranks) == std::vector<int>{2, 0, -1, -1});
  b[3]->begin();  // ticket 2: only rank 1 is still away, so it holds ticket 3
  CHECK(b[2]->refresh());
  CHECK(order_of(*b[2], ranks) == std::vector<int>{2, 0, 3, 1});
  CHECK(b[2]->bound());
  b[1]->begin();
  CHECK(b[1]->rank_of(3) == 1);
}

TEST_CASE("binding: a published estimate reaches the decider; an estimate for another call does not") {
  const int ranks = 3;
  Sessions world(ranks);
  world[1].publish_estimate(0, 5000);
  world[2].publish_estimate(0, 100);
  world[0].publish_estimate(1, 7);  // for the next call: ignored by call 0
  CHECK(world.board(0).estimates(0) == Times{std::nullopt, 5000, 100});
  const auto b = world.enter("sorted_linear_tree", {0, 1, 2});
  // Known estimates first (rank 2, then rank 1), the missing rank 0 last.
  CHECK(order_of(*b[1], ranks) == std::vector<int>{2, 1, 0});
}

TEST_CASE("last_decision: the decider's order, algorithm and estimates; a late rank comes last") {
  const int ranks = 4;
  Sessions world(ranks);
  // Rank 0 predicts it arrives 50 ms after the others: far beyond a ring of
  // tau = 10 us steps. Rank 2 arrives first and decides.
  for (int r = 0; r < ranks; ++r) world[r].publish_estimate(0, r == 0 ? 50000 : 100 + r);
  const auto b = world.enter("sorted_linear_tree", {2, 1, 3, 0});
  for (int r = 0; r < ranks; ++r) b[static_cast<std::size_t>(r)]->finished();
  const auto decider = world[2].last_decision();
  REQUIRE(decider.has_value());
  CHECK(decider->algorithm == "sorted_linear_tree");
  CHECK(decider->order == std::vector<int>{1, 2, 3, 0});
  CHECK(decider->decided_here);
  CHECK(decider->estimates == Times{50000, 101, 102, 103});
  const auto late = world[0].last_decision();
  REQUIRE(late.has_value());
  CHECK(late->order == decider->order);
  CHECK_FALSE(late->decided_here);
  CHECK(late->estimates.empty());
}

TEST_CASE("last_decision: auto_pap runs the ring for equal arrivals and SLT for one rank late beyond tau") {
  const int ranks = 4;
  Sessions world(ranks);
  for (int r = 0; r < ranks; ++r) world[r].publish_estimate(0, 1000);
  for (auto& b : world.enter("auto_pap", {0, 1, 2, 3}, 0)) b->finished();
  CHECK(world[3].last_decision()->algorithm == "ring");
  CHECK(world[3].last_decision()->order == std::vector<int>{0, 1, 2, 3});
  // Call 1: rank 1 estimates 80 ms later than the others.
  for (int r = 0; r < ranks; ++r) world[r].publish_estimate(1, r == 1 ? 81000 : 1000);
  for (auto& b : world.enter("auto_pap", {3, 2, 0, 1}, 1)) b->finished();
  for (int r = 0; r < ranks; ++r) {
    CHECK(world[r].last_decision()->algorithm == "sorted_linear_tree");
    CHECK(world[r].last_decision()->order.back() == 1);
  }
}

TEST_CASE("a decided plan still being built leaves the binding undecided; a plan that fails fails the binding") {
  Sessions world(2);
  const coll::Algorithm& chain = *coll::find_allreduce("arrival_chain");
  std::vector<std::shared_ptr<PendingPlan>> asked;
  auto later = [&](const coll::Algorithm&, int, const std::vector<std::uint32_t>&) {
    asked.push_back(std::make_shared<PendingPlan>());
    return asked.back();
  };
  auto first = world.binding(1, "arrival_chain", 0, later);
  auto second = world.binding(0, "arrival_chain", 0, later);
  CHECK_FALSE(first->begin());  // ticket 0: its plan is being built
  CHECK_FALSE(second->begin());
  REQUIRE(asked.size() == 2);
  CHECK_FALSE(first->refresh());
  CHECK_FALSE(first->decided());
  CHECK(first->undecided_reason() == "the schedule of arrival_chain for arrival position 0 was not built");

  asked[0]->set(Sessions::projection(chain, 2, 0));
  CHECK(first->refresh());
  CHECK(first->decided());
  CHECK(first->rank_of(0) == 1);

  asked[1]->set_error(std::make_exception_ptr(Error("too big")));
  CHECK_THROWS_WITH_AS(second->refresh(), "too big", Error);
  CHECK_FALSE(second->decided());
}

TEST_CASE("arrival positions on one node: virtual rank t is ticket t, the last one by elimination") {
  CHECK(arrival_positions(std::vector<int>{2, 0, -1, -1}, 0) == std::vector<int>{2, 0, -1, -1});
  CHECK(arrival_positions(std::vector<int>{2, 0, 3, -1}, 0) == std::vector<int>{2, 0, 3, 1});
  CHECK(arrival_positions(std::vector<int>{2, -1, 0, 3}, 0) == std::vector<int>{2, 1, 0, 3});
  // Nodes of one rank, or of all of them, are one node's order.
  CHECK(arrival_positions(std::vector<int>{2, 0, 3, -1}, 1) == std::vector<int>{2, 0, 3, 1});
  CHECK(arrival_positions(std::vector<int>{2, 0, 3, -1}, 4) == std::vector<int>{2, 0, 3, 1});
  CHECK(arrival_positions(std::vector<int>{}, 0).empty());
}

TEST_CASE("arrival positions over nodes: nodes whole, in the order they filled; the late rank last") {
  // 2 x 2, rank 1 late: node 1 filled first, node 0 is the one left, rank 1 its one rank away.
  CHECK(arrival_positions(std::vector<int>{2, 0, 3, -1}, 2) == std::vector<int>{2, 3, 0, 1});
  CHECK(arrival_positions(std::vector<int>{0, -1, -1, -1}, 2) == std::vector<int>{-1, -1, -1, -1});
  CHECK(arrival_positions(std::vector<int>{0, 2, 1, -1}, 2) == std::vector<int>{0, 1, 2, 3});
  // A gap in the known tickets: nothing after it counts.
  CHECK(arrival_positions(std::vector<int>{0, -1, 1, 3}, 2) == std::vector<int>{-1, -1, -1, -1});
  // 3 nodes of 2: a node is placed when it fills, the last one when it is the one left.
  CHECK(arrival_positions(std::vector<int>{4, 5, 0, -1, -1, -1}, 2) == std::vector<int>{4, 5, -1, -1, -1, -1});
  CHECK(arrival_positions(std::vector<int>{4, 5, 0, 2, 1, -1}, 2) == std::vector<int>{4, 5, 0, 1, 2, 3});
  // Nodes that do not divide P: one node's order.
  CHECK(arrival_positions(std::vector<int>{4, 0, 1, 2, 3}, 2) == std::vector<int>{4, 0, 1, 2, 3});
}

TEST_CASE("arrival positions over nodes, every prefix of random arrivals: places never change, the last rank last") {
  std::mt19937 random(7);
  for (auto [ranks, n] : {std::pair{4, 2}, {6, 2}, {6, 3}, {8, 2}, {8, 4}, {9, 3}, {12, 4}})
    for (int trial = 0; trial < 50; ++trial) {
      CAPTURE(ranks);
      CAPTURE(n);
      std::vector<int> arrivals(static_cast<std::size_t>(ranks));
      std::iota(arrivals.begin(), arrivals.end(), 0);
      std::shuffle(arrivals.begin(), arrivals.end(), random);
      std::vector<int> holders(static_cast<std::size_t>(ranks), -1);
      const std::vector<int> final_order = arrival_positions(arrivals, n);
      for (int known = 0; known <= ranks; ++known) {
        if (known > 0) holders[static_cast<std::size_t>(known - 1)] = arrivals[static_cast<std::size_t>(known - 1)];
        const std::vector<int> order = arrival_positions(holders, n);
        for (int v = 0; v < ranks; ++v)
          if (order[static_cast<std::size_t>(v)] >= 0) CHECK(order[static_cast<std::size_t>(v)] == final_order[static_cast<std::size_t>(v)]);
        // With every rank but the last arrived, every place is known.
        if (known >= ranks - 1) CHECK(std::count(order.begin(), order.end(), -1) == 0);
      }
      CHECK(final_order.back() == arrivals.back());
      std::vector<int> sorted = final_order;
      std::sort(sorted.begin(), sorted.end());
      std::vector<int> every(static_cast<std::size_t>(ranks));
      std::iota(every.begin(), every.end(), 0);
      CHECK(sorted == every);
      auto ticket_of = [&](int r) { return std::find(arrivals.begin(), arrivals.end(), r) - arrivals.begin(); };
      for (int slot = 0; slot < ranks / n; ++slot)
        for (int position = 0; position < n; ++position) {
          const int r = final_order[static_cast<std::size_t>(slot * n + position)];
          CHECK(r / n == final_order[static_cast<std::size_t>(slot * n)] / n);  // one node per block
          if (position > 0) CHECK(ticket_of(r) > ticket_of(final_order[static_cast<std::size_t>(slot * n + position - 1)]));
        }
    }
}

TEST_CASE("binding over nodes: a rank waits for its node's place, then binds; the late rank is last") {
  const int ranks = 4;
  Sessions world(ranks, 2);  // nodes {0, 1} and {2, 3}
  std::vector<std::unique_ptr<Binding>> b;
  for (int r = 0; r < ranks; ++r) b.push_back(world.binding(r, "arrival_chain"));
  CHECK_FALSE(b[2]->begin());  // ticket 0: node 1 is not full, no place yet
  CHECK_FALSE(b[0]->begin());  // ticket 1
  CHECK(b[0]->undecided_reason().find("ranks 1 3 to arrive") != std::string::npos);
  CHECK_FALSE(b[0]->refresh());
  CHECK(b[3]->begin());  // ticket 2: node 1 fills first; node 0 is the one left, rank 1 its one away
  CHECK(order_of(*b[3], ranks) == std::vector<int>{2, 3, 0, 1});
  CHECK(b[3]->bound());
  CHECK(b[0]->refresh());
  CHECK(b[0]->decided());
  CHECK(order_of(*b[0], ranks) == std::vector<int>{2, 3, 0, 1});
  CHECK(b[2]->refresh());
  CHECK(order_of(*b[2], ranks) == std::vector<int>{2, 3, 0, 1});
  CHECK(b[1]->begin());
  CHECK(order_of(*b[1], ranks) == std::vector<int>{2, 3, 0, 1});
}
