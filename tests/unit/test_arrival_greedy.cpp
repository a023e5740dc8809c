// arrival_greedy (collectives/src/allreduce/arrival_greedy.cpp): the greedy
// among the first P-1 arrivals, the last one joining last, a broadcast from
// it. Verified symbolically for P = 1..64 under random arrival patterns; the
// late rank's share, per-rank costs and rounds against the header; the
// catalogue entry.
//
// The schedule is ticket-bound, so it is the same whatever the arrival
// pattern: a pattern only changes when each rank's steps may start. The
// tests therefore verify it under random topological orders (every
// interleaving of arrivals the data flow allows) and replay it under random
// arrival times: each step starts when its owner has arrived and its
// dependencies are done (unit-time steps, as many at once as are ready).
#include "unit_support.hpp"

#include <earlybird/collectives/allreduce.hpp>
#include <earlybird/collectives/partition.hpp>
#include <earlybird/collectives/reduce.hpp>
#include <earlybird/collectives/verify.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <random>
#include <string>
#include <vector>

using namespace earlybird::coll;
using earlybird::coll::test::check_verified_as;
using earlybird::coll::test::swept_ranks;

namespace {

constexpr std::size_t kElemBytes = 4;

std::size_t at(int i) { return static_cast<std::size_t>(i); }
std::size_t floor_log2(int p) { return static_cast<std::size_t>(std::bit_width(static_cast<unsigned>(p)) - 1); }

std::size_t segments_in(std::size_t count, std::size_t segment) { return segments({0, count}, segment).size(); }

// Random arrival times in ticket order (ascending): uniform, one late rank,
// or two clusters; in units of one step.
std::vector<double> random_arrivals(int p, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> delay(0.0, 20.0);
  std::vector<double> a(at(p));
  const int shape = static_cast<int>(rng() % 3);
  const int split = p > 1 ? 1 + static_cast<int>(rng() % at(p - 1)) : 1;
  for (int i = 0; i < p; ++i) {
    if (shape == 0) a[at(i)] = delay(rng);
    if (shape == 1) a[at(i)] = i == p - 1 ? 1000.0 : delay(rng) / 10.0;
    if (shape == 2) a[at(i)] = (i < split ? 0.0 : 100.0) + delay(rng);
  }
  std::sort(a.begin(), a.end());
  return a;
}

// The replay: when every step is done if each starts once its owner has
// arrived (arrival[owner]) and its dependencies are done, one time unit each.
std::vector<double> replay_finish(const Schedule& s, const std::vector<double>& arrival) {
  std::vector<double> finish(s.steps().size(), 0.0);
  for (StepId id = 0; id < s.steps().size(); ++id) {
    double start = arrival[at(s.steps()[id].owner)];
    for (StepId d : s.deps(id)) start = std::max(start, finish[d]);
    finish[id] = start + 1.0;
  }
  return finish;
}

}  // namespace

TEST_CASE("arrival_greedy verifies for P = 1..64, counts {0, 1, P-1, P, P+1, 1000}, segments, 2 seeds") {
  const Algorithm* algorithm = find_allreduce("arrival_greedy");
  REQUIRE(algorithm != nullptr);
  for (int p : swept_ranks())
    for (std::size_t count : test::block_counts(p))
      for (std::size_t segment : {0u, 1u, 7u, 100u}) {
        if (segment == 1 && count == 1000 && p > 16) continue;  // 10^5 steps: covered at smaller P
        CAPTURE(p);
        CAPTURE(count);
        CAPTURE(segment);
        const Schedule s = algorithm->make(p, count, test::segments_of(segment), kElemBytes);
        check_verified_as(s, Collective::allreduce, 2);
        CHECK(test::first_acknowledgement(s) == "");
      }
}

TEST_CASE("arrival_greedy under random arrival times, P = 1..64: complete, and h + 2 steps after a last rank that comes after everyone is done") {
  std::mt19937_64 rng(23);
  for (int p : swept_ranks())
    for (std::size_t segment : {1u, 5u, 0u}) {
      CAPTURE(p);
      CAPTURE(segment);
      const std::size_t count = 3 * at(p) + 2;
      const Schedule s = allreduce_arrival_greedy(p, count, segment);
      for (int c = 0; c < 4; ++c) {
        std::vector<double> arrival = random_arrivals(p, rng);
        const std::vector<double> finish = replay_finish(s, arrival);
        const double done = *std::max_element(finish.begin(), finish.end());
        CHECK(done >= arrival.back());  // the last rank takes part
        if (p < 2) continue;
        // Late beyond everything the others can do without it: the tail is
        // its reduce, h puts down the broadcast tree, the deepest rank's copy.
        arrival.back() = 1e6;
        const std::vector<double> late = replay_finish(s, arrival);
        CHECK(*std::max_element(late.begin(), late.end()) - 1e6 == static_cast<double>(floor_log2(p) + 2));
      }
    }
}

TEST_CASE("arrival_greedy: the last rank reduces once per segment and sends to at most 2; nothing of the others' reduction waits on it") {
  for (int p = 2; p <= 40; ++p)
    for (std::size_t segment : {1u, 4u, 100u}) {
      CAPTURE(p);
      CAPTURE(segment);
      const std::size_t count = 40, q = segments_in(count, segment);
      const std::size_t children = std::min<std::size_t>(2, at(p - 1));
      const Schedule s = allreduce_arrival_greedy(p, count, segment);
      CHECK(test::steps_of(s, p - 1, StepKind::reduce) == q);
      CHECK(test::steps_of(s, p - 1, StepKind::put) == q * children);
      CHECK(test::steps_of(s, p - 1, StepKind::copy) == 0);
      const test::LeftAfter left = test::left_after(s, p - 1);
      CHECK(left.reduces == 0);
      CHECK(left.transfers == q * (at(p - 1) - children));  // the broadcast below the root's children
    }
}

TEST_CASE("arrival_greedy costs: 2(P-1) count sent, (P-1) count reduced; the early ranks as reduce_greedy over P-1 plus join and bcast") {
  for (int p = 1; p <= 40; ++p)
    for (std::size_t segment : {0u, 3u, 64u}) {
      CAPTURE(p);
      CAPTURE(segment);
      const std::size_t count = 100;
      const ScheduleStats stats = schedule_stats(allreduce_arrival_greedy(p, count, segment));
      std::size_t sent = 0, reduced = 0;
      for (const RankStats& r : stats.per_rank) {
        sent += r.elems_sent;
        reduced += r.elems_reduced;
      }
      CHECK(sent == 2 * at(p - 1) * count);
      CHECK(reduced == at(p - 1) * count);
      if (p < 3) continue;
      const ScheduleStats early = schedule_stats(reduce_greedy(p - 1, count, segment));
      const std::size_t q = segments_in(count, segment);
      for (int r = 0; r + 1 < p; ++r) {
        CAPTURE(r);
        // Id r is node r + 1 of the broadcast's heap tree: children 2r + 3, 2r + 4 below P.
        const std::size_t sends = (r == 0 ? 1 : 0) + (2 * r + 3 < p ? 1 : 0) + (2 * r + 4 < p ? 1 : 0);
        CHECK(stats.per_rank[at(r)].puts == early.per_rank[at(r)].puts + sends * q);
        CHECK(stats.per_rank[at(r)].elems_sent == early.per_rank[at(r)].elems_sent + sends * count);
        CHECK(stats.per_rank[at(r)].elems_reduced == early.per_rank[at(r)].elems_reduced);
      }
      CHECK(stats.per_rank[at(p - 1)].elems_reduced == count);
    }
}

// Rounds are dependency depth (chains of transfers): the greedy's receives
// land in fresh slots, so one segment's greedy is as deep as a binomial tree,
// floor(log2 n), not its ceil(log2 n) single-port steps.
TEST_CASE("arrival_greedy, one segment: floor(log2(P-1)) + 1 + floor(log2 P) rounds, greedy_reduce_bcast's or one more") {
  for (int p : swept_ranks(2)) {
    CAPTURE(p);
    const std::size_t rounds = schedule_stats(allreduce_arrival_greedy(p, 50, 0)).rounds;
    CHECK(rounds == floor_log2(p - 1) + 1 + floor_log2(p));
    const std::size_t greedy =
        schedule_stats(find_allreduce("greedy_reduce_bcast")->make(p, 50, test::segments_of(50), kElemBytes)).rounds;
    CHECK(rounds == greedy + (std::has_single_bit(static_cast<unsigned>(p)) ? 0 : 1));
  }
}

TEST_CASE("arrival_greedy in the catalogue: ticket-bound, pipelined with the greedy's 512 KiB default, commutative only") {
  const Algorithm* a = find_allreduce("arrival_greedy");
  REQUIRE(a != nullptr);
  CHECK(a->arrival == ArrivalOrder::ticket);
  CHECK(a->pipelined);
  CHECK(a->needs_commutative);
  CHECK(a->default_segment_bytes == 512u * 1024u);
  CHECK(test::contains(algorithm_names(Collective::allreduce), "arrival_greedy"));
  // 512 KiB of 4-byte elements is 131072 elements: one segment, then two.
  CHECK(schedule_stats(a->make(3, 131072, {}, kElemBytes)).per_rank[2].elems_reduced == 131072);
  CHECK(test::steps_of(a->make(3, 131072, {}, kElemBytes), 2, StepKind::reduce) == 1);
  CHECK(test::steps_of(a->make(3, 131073, {}, kElemBytes), 2, StepKind::reduce) == 2);
}
