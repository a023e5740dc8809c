// The arrival policy and board (runtime/src/pap): who decides, what they
// decide from estimates (complete, partial, none) and history, and the
// entry protocol on the in-process transport, one thread playing every rank
// in a chosen arrival order.
#include <doctest/doctest.h>

#include "pap/arrival_board.hpp"
#include "pap/arrival_entry.hpp"
#include "pap/arrival_policy.hpp"
#include "rma/inproc_transport.hpp"

#include <earlybird/collectives/pap.hpp>

#include <memory>
#include <optional>
#include <vector>

using namespace earlybird;
using namespace earlybird::pap;

namespace {

using Times = std::vector<std::optional<std::int64_t>>;

Timing timing_of(double tau_us, int ranks) { return Timing{tau_us, 2.0 * (ranks - 1) * tau_us}; }

// One in-process "world" of `ranks` boards, driven from this thread.
struct Boards {
  explicit Boards(int ranks) {
    layout.ranks = ranks;
    layout.flags_per_lane = 8;
    layout.scratch_bytes = 64;
    fabric = std::make_shared<InProcFabric>(ranks, layout.total_bytes());
    for (int r = 0; r < ranks; ++r) {
      transports.push_back(std::make_unique<InProcTransport>(fabric, r));
      boards.push_back(std::make_unique<ArrivalBoard>(*transports.back(), layout));
    }
  }
  ArrivalEntry entry(int rank, Requested requested, std::uint64_t call = 0) {
    ArrivalEntry::Setup setup{requested, call, 1000 * rank, timing_of(10, layout.ranks), false};
    return ArrivalEntry(*boards[static_cast<std::size_t>(rank)], rank, layout.ranks, setup);
  }
  WindowLayout layout;
  std::shared_ptr<InProcFabric> fabric;
  std::vector<std::unique_ptr<InProcTransport>> transports;
  std::vector<std::unique_ptr<ArrivalBoard>> boards;
};

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

TEST_CASE("decide: estimate-bound algorithms follow the estimates, PRR's k is the recurrence's") {
  const Times estimates{0, 900, 10, 20};
  const Timing timing = timing_of(100, 4);
  const Decision slt = decide(Requested::sorted_linear_tree, {estimates, {}}, timing);
  CHECK(static_cast<Runnable>(slt.algorithm) == Runnable::sorted_linear_tree);
  CHECK(slt.order == std::vector<int>{0, 2, 3, 1});
  CHECK(slt.presteps.empty());

  const Decision prr = decide(Requested::pre_reduced_ring, {estimates, {}}, timing);
  CHECK(static_cast<Runnable>(prr.algorithm) == Runnable::pre_reduced_ring);
  CHECK(prr.order == slt.order);
  const std::vector<double> sorted{0, 10, 20, 900};
  CHECK(prr.presteps == coll::prr_presteps(sorted, 100));

  // No estimates at all: rank order and no pre-steps, on whoever decides.
  const Decision fallback = decide(Requested::pre_reduced_ring, {Times(4), {}}, timing);
  CHECK(fallback.order == std::vector<int>{0, 1, 2, 3});
  CHECK(fallback.presteps == std::vector<std::uint32_t>(4, 0));
}

TEST_CASE("auto_pap: ring when balanced, PRR in between, SLT beyond a ring, the ticket chain from history") {
  const Timing timing = timing_of(100, 4);  // tau 100 us, balanced ring 600 us
  auto chosen = [&](const Times& estimates, const Times& previous) {
    return static_cast<Runnable>(decide(Requested::auto_pap, {estimates, previous}, timing).algorithm);
  };
  CHECK(chosen({0, 50, 20, 90}, {}) == Runnable::ring);
  CHECK(chosen({0, 300, 20, 90}, {}) == Runnable::pre_reduced_ring);
  CHECK(chosen({0, 50000, 20, 90}, {}) == Runnable::sorted_linear_tree);
  // Without every estimate the previous epoch's arrivals decide.
  CHECK(chosen({0, std::nullopt, 0, 0}, {0, 90000, 10, 5}) == Runnable::arrival_chain);
  CHECK(chosen({0, std::nullopt, 0, 0}, {0, 90, 10, 5}) == Runnable::ring);
  CHECK(chosen(Times(4), Times(4)) == Runnable::ring);
}

TEST_CASE("entry: tickets follow arrival order, the first arrival decides, everyone reads the same decision") {
  for (int ranks : {1, 2, 3, 5}) {
    CAPTURE(ranks);
    Boards world(ranks);
    // Arrival order: highest rank first.
    std::vector<ArrivalEntry> entries;
    for (int r = 0; r < ranks; ++r) entries.push_back(world.entry(r, Requested::sorted_linear_tree));
    for (int r = ranks - 1; r >= 0; --r) entries[static_cast<std::size_t>(r)].begin(0);
    for (int r = 0; r < ranks; ++r) {
      ArrivalEntry& e = entries[static_cast<std::size_t>(r)];
      CHECK(e.ticket() == ranks - 1 - r);
      REQUIRE(e.poll());
      CHECK(e.ranks_by_virtual() == entries[0].ranks_by_virtual());
      CHECK(e.ranks_by_virtual()[static_cast<std::size_t>(e.virtual_rank())] == r);
    }
    // Epoch 1 uses the other half of the board; tickets restart at 0.
    std::vector<ArrivalEntry> next;
    for (int r = 0; r < ranks; ++r) next.push_back(world.entry(r, Requested::arrival_chain, 1));
    for (int r = 0; r < ranks; ++r) next[static_cast<std::size_t>(r)].begin(1);
    for (int r = 0; r < ranks; ++r) CHECK(next[static_cast<std::size_t>(r)].ticket() == r);
  }
}

TEST_CASE("entry: ticket binding learns holders as they arrive; the last holder by elimination") {
  const int ranks = 4;
  Boards world(ranks);
  std::vector<ArrivalEntry> entries;
  for (int r = 0; r < ranks; ++r) entries.push_back(world.entry(r, Requested::arrival_chain));
  entries[2].begin(0);  // ticket 0
  REQUIRE(entries[2].bound());
  CHECK(entries[2].ranks_by_virtual() == std::vector<int>{2, -1, -1, -1});
  CHECK_FALSE(entries[2].learn_holders());
  entries[0].begin(0);  // ticket 1
  CHECK(entries[2].learn_holders());
  CHECK(entries[2].ranks_by_virtual() == std::vector<int>{2, 0, -1, -1});
  entries[3].begin(0);  // ticket 2: only rank 1 is still away, so it holds ticket 3
  CHECK(entries[2].learn_holders());
  CHECK(entries[2].ranks_by_virtual() == std::vector<int>{2, 0, 3, 1});
  entries[1].begin(0);
  CHECK(entries[1].ticket() == 3);
}

TEST_CASE("entry: a published estimate reaches the decider; an estimate for another call does not") {
  const int ranks = 3;
  Boards world(ranks);
  world.boards[1]->publish_estimate(0, 5000);
  world.boards[2]->publish_estimate(0, 100);
  world.boards[0]->publish_estimate(1, 7);  // for the next call: ignored by call 0
  const Times seen = world.boards[0]->estimates(0);
  CHECK(seen == Times{std::nullopt, 5000, 100});
  std::vector<ArrivalEntry> entries;
  for (int r = 0; r < ranks; ++r) entries.push_back(world.entry(r, Requested::sorted_linear_tree));
  for (auto& e : entries) e.begin(0);
  REQUIRE(entries[1].poll());
  // Known estimates first (rank 2, then rank 1), the missing rank 0 last.
  CHECK(entries[1].ranks_by_virtual() == std::vector<int>{2, 1, 0});
}
