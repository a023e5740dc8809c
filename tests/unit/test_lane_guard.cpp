// LaneGuard (runtime/src/exec/lane_guard.hpp): when a rank may write a peer's
// window lane for collective n (the peer finished n - 2), from knowledge that
// is implied (a collective every rank had to start), told (a peer that
// finished a rooted collective stores it into its writers' done tables,
// where peers are reached by messages) or asked (the peer's done word, read
// through the transport). Ranks are in-process transports over one
// fabric, driven from this thread.
#include <doctest/doctest.h>

#include "exec/lane_guard.hpp"
#include "rma/inproc_transport.hpp"
#include "rma/window_layout.hpp"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

using namespace earlybird;

namespace {

// The large lanes; the small and the inline lanes are eight (kInline).
constexpr int kLanes = WindowLayout::kLanes;

// `ranks` transports over one fabric, and one LaneGuard per rank; with
// `by_messages` the transports behave as ones that reach peers by messages
// (the guards then tell writers).
struct World {
  explicit World(int ranks, bool by_messages = false)
      : layout(layout_of(ranks)),
        fabric(std::make_shared<InProcFabric>(ranks, WindowSize{layout.inline_offset(0), layout.inline_offset(0)})) {
    for (int r = 0; r < ranks; ++r) transports.push_back(std::make_unique<InProcTransport>(fabric, r, by_messages));
    for (int r = 0; r < ranks; ++r) guards.push_back(std::make_unique<LaneGuard>(*transports[r], layout));
  }
  static WindowLayout layout_of(int ranks) {
    WindowLayout l;
    l.ranks = ranks;
    return l;
  }
  LaneGuard& guard(int rank) { return *guards[static_cast<std::size_t>(rank)]; }
  std::uint64_t done_word(int rank) {
    return transports[0]->load_remote(rank, WindowLayout::kDoneWordOffset);
  }
  // What `teller` told `rank` it finished (rank's done table).
  std::uint64_t told(int rank, int teller) {
    return transports[0]->load_remote(rank, layout.done_table_offset(teller));
  }
  WindowLayout layout;
  std::shared_ptr<InProcFabric> fabric;
  std::vector<std::unique_ptr<InProcTransport>> transports;
  std::vector<std::unique_ptr<LaneGuard>> guards;
};

// The highest sequence `guard` may write into `peer`'s lane for, searched up
// to `limit`: free(peer, n) holds for n <= answer and fails above it.
std::uint64_t last_free(const LaneGuard& guard, int peer, std::uint64_t limit = 100) {
  std::uint64_t n = 1;
  while (n < limit && guard.free(peer, n + 1, kLanes)) ++n;
  return n;
}

// Asks `peer` how far it got: make_free of a sequence no lane can be free
// for.
void ask(LaneGuard& guard, int peer) { guard.make_free(peer, 1'000'000, kLanes); }

}  // namespace

TEST_CASE("with nothing known, only the first two collectives' lanes are free") {
  World world(3);
  for (int peer = 0; peer < 3; ++peer) {
    CAPTURE(peer);
    CHECK(world.guard(0).free(peer, 0, kLanes));
    CHECK(world.guard(0).free(peer, 1, kLanes));
    CHECK(world.guard(0).free(peer, 2, kLanes));
    CHECK_FALSE(world.guard(0).free(peer, 3, kLanes));
  }
}

TEST_CASE("finished(n, all started) implies every peer finished n - 1: lanes up to n + 1 are free") {
  World world(4);
  world.guard(0).finished(5, true);
  for (int peer = 0; peer < 4; ++peer) {
    CAPTURE(peer);
    CHECK(world.guard(0).free(peer, 6, kLanes));
    CHECK_FALSE(world.guard(0).free(peer, 7, kLanes));
    CHECK(last_free(world.guard(0), peer) == 6);
  }
  // Other ranks' guards learn nothing from rank 0's completion.
  CHECK(last_free(world.guard(1), 0) == 2);
}

TEST_CASE("finished(n) publishes n in this rank's done word, all started or not") {
  World world(2);
  CHECK(world.done_word(1) == 0);
  world.guard(1).finished(3, false);
  CHECK(world.done_word(1) == 3);
  world.guard(1).finished(4, true);
  CHECK(world.done_word(1) == 4);
  CHECK(world.done_word(0) == 0);
}

TEST_CASE("finished(n) of a collective not all ranks started implies nothing about peers") {
  World world(3);
  world.guard(0).finished(7, false);
  for (int peer = 0; peer < 3; ++peer) CHECK(last_free(world.guard(0), peer) == 2);
}

TEST_CASE("asking reads the peer's done word: its lanes up to done + 2 are free, others' unchanged") {
  World world(3);
  world.guard(1).finished(5, false);  // rank 1 finished 5; a broadcast, say
  ask(world.guard(0), 1);
  CHECK(world.guard(0).free(1, 7, kLanes));
  CHECK_FALSE(world.guard(0).free(1, 8, kLanes));
  CHECK(last_free(world.guard(0), 2) == 2);  // rank 2 was not asked
}

TEST_CASE("asking a peer that finished nothing yet leaves only lanes 1 and 2 free") {
  World world(2);
  ask(world.guard(0), 1);
  CHECK(last_free(world.guard(0), 1) == 2);
}

TEST_CASE("knowledge never goes back") {
  World world(2);
  SUBCASE("an implied finish is not undone by asking a peer that published less") {
    world.guard(1).finished(4, false);
    world.guard(0).finished(10, true);  // implies rank 1 finished 9
    ask(world.guard(0), 1);              // rank 1's word says 4
    CHECK(last_free(world.guard(0), 1) == 11);
  }
  SUBCASE("a later, smaller implied finish does not lower what was asked") {
    world.guard(1).finished(20, false);
    ask(world.guard(0), 1);
    world.guard(0).finished(6, true);
    CHECK(last_free(world.guard(0), 1) == 22);
    CHECK(last_free(world.guard(0), 0) == 7);  // rank 0 itself: only the implied 5
  }
}

TEST_CASE("asking again picks up the peer's progress") {
  World world(2);
  world.guard(1).finished(1, false);
  ask(world.guard(0), 1);
  CHECK(last_free(world.guard(0), 1) == 3);
  world.guard(1).finished(2, false);
  CHECK(last_free(world.guard(0), 1) == 3);  // not asked yet: still the old answer
  ask(world.guard(0), 1);
  CHECK(last_free(world.guard(0), 1) == 4);
}

TEST_CASE("with eight lanes (the inline lines, the small lanes) a peer known done with n frees lanes up to n + 8") {
  World world(3);
  constexpr int kInline = WindowLayout::kInlineLanes;
  for (std::uint64_t n = 1; n <= 8; ++n) CHECK(world.guard(0).free(1, n, kInline));  // nothing used yet
  CHECK_FALSE(world.guard(0).free(1, 9, kInline));
  world.guard(1).finished(5, false);
  ask(world.guard(0), 1);
  CHECK(world.guard(0).free(1, 13, kInline));
  CHECK_FALSE(world.guard(0).free(1, 14, kInline));
  CHECK_FALSE(world.guard(0).free(1, 8, kLanes));  // the same knowledge, two lanes: up to 7
  SUBCASE("all_free asks only the peers not known to be free, and says whether all are") {
    CHECK_FALSE(world.guard(0).all_free(0, 14, kInline));  // rank 1 at 5, rank 2 at 0
    world.guard(1).finished(6, false);
    world.guard(2).finished(6, false);
    CHECK(world.guard(0).all_free(0, 14, kInline));
  }
}

TEST_CASE("make_free asks only when the lane is not known free, and says whether it is now") {
  World world(2);
  world.guard(1).finished(5, false);
  CHECK(world.guard(0).make_free(1, 2, kLanes));  // free without asking: nothing learnt
  CHECK(last_free(world.guard(0), 1) == 2);
  CHECK(world.guard(0).make_free(1, 7, kLanes));  // asked: rank 1 finished 5
  CHECK(last_free(world.guard(0), 1) == 7);
  CHECK_FALSE(world.guard(0).make_free(1, 8, kLanes));
}

TEST_CASE("the window's lanes: two large, eight small, none overlapping, the flags one zeroed prefix") {
  WindowLayout layout;
  layout.ranks = 5;
  layout.flags_per_lane = 1u << 16;
  layout.scratch_bytes = std::size_t{8} << 20;
  constexpr int kAll = WindowLayout::kLanes + WindowLayout::kSmallLanes;
  for (int lane = 0; lane + 1 < kAll; ++lane) {
    const std::size_t flags = lane < WindowLayout::kLanes ? layout.flags_per_lane : layout.small_flags();
    CHECK(layout.flag_offset(lane, 0) + flags * sizeof(std::uint64_t) == layout.flag_offset(lane + 1, 0));
  }
  CHECK(layout.flag_offset(kAll, 0) <= layout.zeroed_bytes());
  // Scratch: the small lanes, then the large ones, each its own bytes.
  std::vector<std::pair<std::size_t, std::size_t>> scratch;
  for (int lane = 0; lane < kAll; ++lane)
    scratch.emplace_back(layout.scratch_offset(lane),
                         lane < WindowLayout::kLanes ? layout.scratch_bytes : layout.small_scratch_bytes());
  std::sort(scratch.begin(), scratch.end());
  CHECK(scratch.front().first == layout.zeroed_bytes());
  for (std::size_t i = 0; i + 1 < scratch.size(); ++i) CHECK(scratch[i].first + scratch[i].second == scratch[i + 1].first);
  CHECK(scratch.back().first + scratch.back().second == layout.total_bytes());
  CHECK(layout.small_scratch_bytes() == WindowLayout::kSmallScratchBytes);
  // A small lane never holds more than a large one.
  layout.scratch_bytes = 4096;
  layout.flags_per_lane = 64;
  CHECK(layout.small_scratch_bytes() == 4096);
  CHECK(layout.small_flags() == 64);
}

TEST_CASE("a collective takes small lane n % 8 when its plan fits one, else large lane n % 2") {
  WindowLayout layout;
  layout.flags_per_lane = 1u << 16;
  layout.scratch_bytes = std::size_t{8} << 20;
  CHECK(layout.fits_lane(true, WindowLayout::kSmallScratchBytes, WindowLayout::kSmallFlags));
  CHECK_FALSE(layout.fits_lane(true, WindowLayout::kSmallScratchBytes + 1, 1));
  CHECK_FALSE(layout.fits_lane(true, 1, WindowLayout::kSmallFlags + 1));
  CHECK(layout.fits_lane(false, layout.scratch_bytes, layout.flags_per_lane));
  CHECK_FALSE(layout.fits_lane(false, layout.scratch_bytes + 1, 1));
  for (std::uint64_t n = 1; n < 20; ++n) {
    CHECK(WindowLayout::lane_of(n, true).index == WindowLayout::kLanes + static_cast<int>(n % 8));
    CHECK(WindowLayout::lane_of(n, true).distance == WindowLayout::kSmallLanes);
    CHECK(WindowLayout::lane_of(n, false).index == static_cast<int>(n % 2));
    CHECK(WindowLayout::lane_of(n, false).distance == WindowLayout::kLanes);
  }
}

TEST_CASE("where peers are reached by messages, a rooted collective's end is told to its writers") {
  World world(3, true);
  REQUIRE(world.guard(1).tells_writers());
  const std::vector<int> writers{0, 1};  // rank 1 itself is skipped
  world.guard(1).finished(1, false, writers);
  CHECK(world.told(0, 1) == 0);  // not yet: at the drive holder's next idle turn
  world.guard(1).tell_untold();
  CHECK(world.told(0, 1) == 1);
  CHECK(world.told(2, 1) == 0);  // not a writer
  CHECK(world.told(1, 1) == 0);  // not itself
  SUBCASE("the writer finds it in its table, without asking") {
    world.guard(1).finished(2, false);  // the done word moves on; nothing told
    CHECK(world.guard(0).make_free(1, 9, WindowLayout::kSmallLanes));  // 1 + 8: from the table
    CHECK(last_free(world.guard(0), 1) == 3);                           // told 1, not asked 2
  }
  SUBCASE("at most once per kTellEvery collectives per writer, with the latest done word") {
    for (std::uint64_t n = 2; n < 1 + LaneGuard::kTellEvery; ++n) {
      world.guard(1).finished(n, false, writers);
      world.guard(1).tell_untold();
      CHECK(world.told(0, 1) == 1);
    }
    world.guard(1).finished(1 + LaneGuard::kTellEvery, false, writers);
    world.guard(1).finished(2 + LaneGuard::kTellEvery, false);  // before the tell goes out
    world.guard(1).tell_untold();
    CHECK(world.told(0, 1) == 2 + LaneGuard::kTellEvery);
  }
  SUBCASE("a collective every rank started tells nobody") {
    world.guard(1).finished(9, true, writers);
    world.guard(1).tell_untold();
    CHECK(world.told(0, 1) == 1);
  }
  SUBCASE("a table that does not free the lane still leads to asking") {
    world.guard(1).finished(7, false);
    CHECK(world.guard(0).make_free(1, 15, WindowLayout::kSmallLanes));  // asked: done word 7
  }
  SUBCASE("a lane the next tell would free is waited for, and asked for after kTellWait") {
    world.guard(1).finished(5, false);  // done word 5; the table still says 1
    constexpr auto kSmall = WindowLayout::kSmallLanes;
    CHECK_FALSE(world.guard(0).make_free(1, 10, kSmall));  // needs 2; 1 + kTellEvery + 8 >= 10: wait
    CHECK_FALSE(world.guard(0).make_free(1, 10, kSmall));
    std::this_thread::sleep_for(LaneGuard::kTellWait);  // a span of the clock, not a synchronisation
    CHECK(world.guard(0).make_free(1, 10, kSmall));  // asked: done word 5
    CHECK(last_free(world.guard(0), 1) == 7);
  }
}

TEST_CASE("over direct windows nothing is told: writers ask") {
  World world(2);
  CHECK_FALSE(world.guard(1).tells_writers());
  const std::vector<int> writers{0};
  world.guard(1).finished(3, false, writers);
  world.guard(1).tell_untold();
  CHECK(world.told(0, 1) == 0);
  CHECK(last_free(world.guard(0), 1) == 2);
}
