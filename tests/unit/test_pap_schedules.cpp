// Arrival-pattern-aware allreduce: the pre-step recurrence, first senders and
// last reducers against hand-worked cases; the sorted linear tree and the
// pre-reduced ring verified symbolically under random arrival patterns; their
// per-rank costs and scratch against the formulas in their headers; what a
// late rank leaves for the others to do.
#include "unit_support.hpp"

#include <earlybird/collectives/allreduce.hpp>
#include <earlybird/collectives/pap.hpp>
#include <earlybird/collectives/partition.hpp>
#include <earlybird/collectives/plan.hpp>
#include <earlybird/collectives/verify.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

using namespace earlybird::coll;
using earlybird::coll::test::check_verified_as;
using earlybird::coll::test::contains;
using earlybird::coll::test::swept_ranks;

namespace {

using Presteps = std::vector<std::uint32_t>;
constexpr std::size_t kElemBytes = 4;

std::size_t at(int i) { return static_cast<std::size_t>(i); }

// A random valid k: k[P-1] = 0, each k[i] = k[i+1] or one more.
Presteps random_valid_presteps(int p, std::mt19937_64& rng) {
  Presteps k(at(p), 0);
  for (int i = p - 2; i >= 0; --i) k[at(i)] = k[at(i + 1)] + static_cast<std::uint32_t>(rng() % 2);
  return k;
}

// Sorted arrival times of one of three shapes: uniform delays, everyone on
// time but one late rank, or two clusters far apart.
std::vector<double> random_arrivals(int p, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> delay(0.0, 10.0);
  std::vector<double> a(at(p));
  const int shape = static_cast<int>(rng() % 3);
  const int split = p > 1 ? 1 + static_cast<int>(rng() % at(p - 1)) : 1;
  for (int i = 0; i < p; ++i) {
    if (shape == 0) a[at(i)] = delay(rng);
    if (shape == 1) a[at(i)] = i == p - 1 ? 10.0 + delay(rng) : delay(rng) / 100.0;
    if (shape == 2) a[at(i)] = (i < split ? 0.0 : 10.0) + delay(rng) / 10.0;
  }
  std::sort(a.begin(), a.end());
  return a;
}

// k from random arrivals and a random tau (from a tenth of a step to a step
// as long as the whole spread of arrivals), plus the two extremes.
std::vector<Presteps> presteps_to_try(int p, std::mt19937_64& rng, int random_cases) {
  std::uniform_real_distribution<double> tau(0.1, 12.0);
  std::vector<Presteps> all{Presteps(at(p), 0), presteps_last_late(p)};
  for (int c = 0; c < random_cases; ++c) all.push_back(prr_presteps(random_arrivals(p, rng), tau(rng)));
  return all;
}

std::vector<std::size_t> pap_counts(int p) { return test::block_counts(p); }  // {0, 1, P-1, P, P+1, 1000}

std::string show(const Presteps& k) {
  std::string text = "k =";
  for (std::uint32_t v : k) text += " " + std::to_string(v);
  return text;
}

// k = [P-1, ..., 1, 0]: every chunk starts at rank 0.
}  // namespace

// ---------------------------------------------------------------------------
// The recurrence, worked by hand (tau = 1 unless said otherwise):
//   k[P-1] = 0;  k[i] = k[i+1] + 1 if a[P-1] - a[i+1] >= (k[i+1] + 1) tau, else k[i+1]
//   f(i) = i + k[i];  sp[j] = min{i : f(i) >= j};  rp[j] = sp[j] - 1 mod P
// ---------------------------------------------------------------------------

// P = 4, one late rank, a = [0, 0, 0, 10]:
//   k3 = 0; i=2: a3-a3 = 0  >= 1? no  -> k2 = 0
//           i=1: a3-a2 = 10 >= 1? yes -> k1 = 1
//           i=0: a3-a1 = 10 >= 2? yes -> k0 = 2          k = [2, 1, 0, 0]
//   f = [2, 2, 2, 3]: chunks 0..2 start at 0, chunk 3 at 3  sp = [0, 0, 0, 3]
//   rp = [3, 3, 3, 2]: the late rank reduces chunks 0..2 last.
TEST_CASE("prr presteps, P = 4, one late rank") {
  const std::vector<double> a{0, 0, 0, 10};
  const Presteps k = prr_presteps(a, 1.0);
  CHECK(k == Presteps{2, 1, 0, 0});
  CHECK(prr_first_senders(k) == std::vector<int>{0, 0, 0, 3});
  CHECK(prr_last_reducers(k) == std::vector<int>{3, 3, 3, 2});
  CHECK(k == presteps_last_late(4));
}

// P = 5, two clusters, a = [0, 0.1, 0.2, 5, 5.1]:
//   k4 = 0; i=3: a4-a4 = 0   >= 1? no  -> k3 = 0
//           i=2: a4-a3 = 0.1 >= 1? no  -> k2 = 0
//           i=1: a4-a2 = 4.9 >= 1? yes -> k1 = 1
//           i=0: a4-a1 = 5.0 >= 2? yes -> k0 = 2         k = [2, 1, 0, 0, 0]
//   f = [2, 2, 2, 3, 4]                                  sp = [0, 0, 0, 3, 4]
//                                                        rp = [4, 4, 4, 2, 3]
TEST_CASE("prr presteps, P = 5, two clusters") {
  const std::vector<double> a{0, 0.1, 0.2, 5, 5.1};
  const Presteps k = prr_presteps(a, 1.0);
  CHECK(k == Presteps{2, 1, 0, 0, 0});
  CHECK(prr_first_senders(k) == std::vector<int>{0, 0, 0, 3, 4});
  CHECK(prr_last_reducers(k) == std::vector<int>{4, 4, 4, 2, 3});
}

// P = 3, all equal, a = [1, 1, 1], tau = 0.5: every slack is 0 -> k = [0, 0, 0],
// f = [0, 1, 2], sp = [0, 1, 2], rp = [2, 0, 1]: the plain ring.
TEST_CASE("prr presteps, P = 3, everyone on time: the ring") {
  const std::vector<double> a{1, 1, 1};
  const Presteps k = prr_presteps(a, 0.5);
  CHECK(k == Presteps{0, 0, 0});
  CHECK(prr_first_senders(k) == std::vector<int>{0, 1, 2});
  CHECK(prr_last_reducers(k) == std::vector<int>{2, 0, 1});
}

// P = 5, the slack runs out, a = [0, 0, 0, 0, 2.5]:
//   k4 = 0; i=3: 0 >= 1? no -> k3 = 0;  i=2: 2.5 >= 1 -> k2 = 1
//           i=1: 2.5 >= 2 -> k1 = 2;    i=0: 2.5 >= 3? no -> k0 = 2   k = [2, 2, 1, 0, 0]
//   f = [2, 3, 3, 3, 4]: rank 1 starts chunk 3          sp = [0, 0, 0, 1, 4]
//                                                        rp = [4, 4, 4, 0, 3]
TEST_CASE("prr presteps, P = 5, a late rank 2.5 steps behind") {
  const std::vector<double> a{0, 0, 0, 0, 2.5};
  const Presteps k = prr_presteps(a, 1.0);
  CHECK(k == Presteps{2, 2, 1, 0, 0});
  CHECK(prr_first_senders(k) == std::vector<int>{0, 0, 0, 1, 4});
  CHECK(prr_last_reducers(k) == std::vector<int>{4, 4, 4, 0, 3});
}

// P = 6, where the published pseudo-code (advance i at most once per chunk)
// goes wrong, a = [0, 0, 3.5, 4, 4.9, 5]:
//   k5 = 0; i=4: 0 -> k4 = 0;  i=3: a5-a4 = 0.1 >= 1? no -> k3 = 0
//           i=2: a5-a3 = 1   >= 1? yes -> k2 = 1
//           i=1: a5-a2 = 1.5 >= 2? no  -> k1 = 1
//           i=0: a5-a1 = 5   >= 2? yes -> k0 = 2         k = [2, 1, 1, 0, 0, 0]
//   f = [2, 2, 3, 3, 4, 5]                               sp = [0, 0, 0, 2, 4, 5]
// The pseudo-code gives [0, 0, 0, 1, 2, 3]: rank 1 would start chunk 3 though
// its own first chunk is f(1) = 2, and ranks 2, 3 chunks below theirs.
TEST_CASE("prr presteps, P = 6: first senders where f stays flat") {
  const std::vector<double> a{0, 0, 3.5, 4, 4.9, 5};
  const Presteps k = prr_presteps(a, 1.0);
  CHECK(k == Presteps{2, 1, 1, 0, 0, 0});
  CHECK(prr_first_senders(k) == std::vector<int>{0, 0, 0, 2, 4, 5});
  CHECK(prr_last_reducers(k) == std::vector<int>{5, 5, 5, 1, 3, 4});
}

TEST_CASE("prr presteps: the condition is >=, and a longer step means fewer pre-steps") {
  const std::vector<double> a{0, 0, 1};
  CHECK(prr_presteps(a, 1.0) == Presteps{1, 0, 0});      // a2 - a1 = 1 >= 1 tau
  CHECK(prr_presteps(a, 1.0001) == Presteps{0, 0, 0});
  const std::vector<double> one{7};
  CHECK(prr_presteps(one, 1.0) == Presteps{0});
}

TEST_CASE("prr presteps of random arrivals are valid; rank 0 starts k[0]+1 chunks, others 1 + k[i] - k[i-1]") {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> tau(0.05, 5.0);
  for (int p : swept_ranks())
    for (int c = 0; c < 20; ++c) {
      CAPTURE(p);
      const Presteps k = prr_presteps(random_arrivals(p, rng), tau(rng));
      REQUIRE(valid_presteps(k));
      const std::vector<int> sp = prr_first_senders(k);
      CHECK(std::is_sorted(sp.begin(), sp.end()));
      for (int i = 0; i < p; ++i) {
        const auto starts = static_cast<std::uint32_t>(std::count(sp.begin(), sp.end(), i));
        CHECK(starts == 1 + k[at(i)] - (i == 0 ? 0 : k[at(i - 1)]));
        // rank i's first chunk f(i) is its own or arrives from i-1 (which has the same f)
        const std::uint32_t f = static_cast<std::uint32_t>(i) + k[at(i)];
        CHECK((sp[f] == i || (i > 0 && f == static_cast<std::uint32_t>(i - 1) + k[at(i - 1)])));
      }
    }
}

// a[0..P-2] equal, a[P-1] -> infinity: i = P-2 compares a[P-1] - a[P-1] = 0
// (k[P-2] = 0); every earlier i has unbounded slack (k[i] = k[i+1] + 1).
TEST_CASE("presteps_all_ahead: [P-1, ..., 1, 0], valid, every chunk from rank 0") {
  CHECK(presteps_all_ahead(1) == Presteps{0});
  CHECK(presteps_all_ahead(4) == Presteps{3, 2, 1, 0});
  for (int p = 1; p <= 40; ++p) {
    CHECK(valid_presteps(presteps_all_ahead(p)));
    CHECK(prr_first_senders(presteps_all_ahead(p)) == std::vector<int>(static_cast<std::size_t>(p), 0));
  }
  CHECK_THROWS_AS(presteps_all_ahead(0), std::invalid_argument);
}

TEST_CASE("presteps_last_late is the recurrence with one very late rank: [P-2, ..., 1, 0, 0]") {
  CHECK(presteps_last_late(1) == Presteps{0});
  CHECK(presteps_last_late(2) == Presteps{0, 0});
  CHECK(presteps_last_late(5) == Presteps{3, 2, 1, 0, 0});
  for (int p : swept_ranks()) {
    CAPTURE(p);
    std::vector<double> a(at(p), 3.0);
    a.back() = 1e9;
    CHECK(presteps_last_late(p) == prr_presteps(a, 1.0));
    CHECK(valid_presteps(presteps_last_late(p)));
    if (p >= 2) {
      const std::vector<int> sp = prr_first_senders(presteps_last_late(p));
      CHECK(std::count(sp.begin(), sp.end(), 0) == p - 1);  // rank 0 starts chunks 0..P-2
      CHECK(sp.back() == p - 1);                            // the late rank starts chunk P-1
    }
  }
}

TEST_CASE("invalid input is rejected") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> unsorted{0, 2, 1}, with_nan{0, nan, 1}, fine{0, 1, 2}, none{};
  CHECK_THROWS_AS(prr_presteps(unsorted, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(prr_presteps(with_nan, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(prr_presteps(none, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(prr_presteps(fine, 0.0), std::invalid_argument);
  CHECK_THROWS_AS(prr_presteps(fine, -1.0), std::invalid_argument);
  CHECK_THROWS_AS(prr_presteps(fine, nan), std::invalid_argument);
  CHECK_THROWS_AS(presteps_last_late(0), std::invalid_argument);

  CHECK_FALSE(valid_presteps(Presteps{}));
  CHECK_FALSE(valid_presteps(Presteps{1}));           // the last rank has no pre-steps
  CHECK_FALSE(valid_presteps(Presteps{2, 0, 0}));     // a jump of two
  CHECK_FALSE(valid_presteps(Presteps{0, 1, 0}));     // k must not grow towards later ranks
  CHECK(valid_presteps(Presteps{2, 1, 1, 0}));
  CHECK(valid_presteps(Presteps{0}));
  CHECK(contains(presteps_problem(Presteps{0, 0}, 3), "expected one per rank (3)"));
  CHECK(contains(presteps_problem(Presteps{2, 0, 0}, 3), "presteps[0] = 2"));
  CHECK_THROWS_AS(prr_first_senders(Presteps{2, 0, 0}), std::invalid_argument);
  CHECK_THROWS_AS(prr_last_reducers(Presteps{}), std::invalid_argument);

  const Presteps wrong_length{1, 0};
  CHECK_THROWS_WITH_AS(allreduce_pre_reduced_ring(3, 10, wrong_length),
                       "allreduce_pre_reduced_ring: presteps has 2 entries, expected one per rank (3)",
                       std::invalid_argument);
  const Presteps last_not_zero{1, 1, 1};
  CHECK_THROWS_WITH_AS(allreduce_pre_reduced_ring(3, 10, last_not_zero),
                       "allreduce_pre_reduced_ring: presteps[2] (the last rank) must be 0", std::invalid_argument);
  AlgorithmParams params;
  params.presteps = {3, 0, 0};
  for (const char* name : {"pre_reduced_ring", "arrival_prr"})
    CHECK_THROWS_AS(find_allreduce(name)->make(3, 10, params, kElemBytes), std::invalid_argument);
}

// ---------------------------------------------------------------------------
// Symbolic verification
// ---------------------------------------------------------------------------

TEST_CASE("pre_reduced_ring verifies for P = 1..64 under random arrival patterns, counts {0, 1, P-1, P, P+1, 1000}") {
  std::mt19937_64 rng(11);
  for (int p : swept_ranks())
    for (const Presteps& k : presteps_to_try(p, rng, 4))
      for (std::size_t count : pap_counts(p)) {
        CAPTURE(p);
        CAPTURE(count);
        CAPTURE(show(k));
        const Schedule s = allreduce_pre_reduced_ring(p, count, k);
        check_verified_as(s, Collective::allreduce, 1);
        CHECK(test::first_acknowledgement(s) == "");
      }
}

TEST_CASE("pre_reduced_ring verifies for any valid k, P = 1..24, 2 seeds") {
  std::mt19937_64 rng(13);
  for (int p = 1; p <= 24; ++p)
    for (int c = 0; c < 6; ++c) {
      const Presteps k = random_valid_presteps(p, rng);
      for (std::size_t count : {std::size_t{1}, static_cast<std::size_t>(p) + 1, std::size_t{97}}) {
        CAPTURE(p);
        CAPTURE(count);
        check_verified_as(allreduce_pre_reduced_ring(p, count, k), Collective::allreduce, 2);
      }
    }
}

TEST_CASE("sorted_linear_tree and arrival_chain verify, P = 1..64, counts {0, 1, P-1, P, P+1, 1000}, segments") {
  for (const char* name : {"sorted_linear_tree", "arrival_chain"}) {
    const Algorithm* algorithm = find_allreduce(name);
    REQUIRE(algorithm != nullptr);
    for (int p : swept_ranks())
      for (std::size_t count : pap_counts(p))
        for (std::size_t segment : {0u, 1u, 7u, 100u}) {
          if (segment == 1 && count == 1000 && p > 16) continue;  // 250 000 steps: covered at smaller P
          CAPTURE(std::string(name));
          CAPTURE(p);
          CAPTURE(count);
          CAPTURE(segment);
          AlgorithmParams params;
          params.segment_elems = segment;  // 0: the catalogue's default, one segment for these counts
          const Schedule s = algorithm->make(p, count, params, kElemBytes);
          check_verified_as(s, Collective::allreduce, 1);
          CHECK(test::first_acknowledgement(s) == "");
        }
  }
}

// The binding is arrival order, so this is about virtual ranks: SLT folds in
// arrival order, and so does PRR when every chunk starts at the earliest rank.
TEST_CASE("SLT, and PRR with every chunk starting at rank 0, combine in arrival (virtual-rank) order") {
  VerifyOptions ordered;
  ordered.ordered = true;
  for (int p = 1; p <= 32; ++p) {
    CAPTURE(p);
    const VerifyReport slt = verify(allreduce_sorted_linear_tree(p, 37, 5), Collective::allreduce, ordered);
    CHECK_MESSAGE(slt.ok, slt.error);
    const VerifyReport prr =
        verify(allreduce_pre_reduced_ring(p, 37, presteps_all_ahead(p)), Collective::allreduce, ordered);
    CHECK_MESSAGE(prr.ok, prr.error);
    if (p >= 3) CHECK_FALSE(verify(allreduce_pre_reduced_ring(p, 37, {}), Collective::allreduce, ordered).ok);
  }
}

// ---------------------------------------------------------------------------
// Costs and scratch
// ---------------------------------------------------------------------------

// pre_reduced_ring.cpp: puts(r) = 2(P-1) + k[r] - k[r+2], reduced chunks
// P-1 - k[r] + k[r-1], flags (chunks received) 2(P-1) + k[r-1] - k[r+1].
TEST_CASE("pre_reduced_ring per-rank cost, P | count: the formulas in k; totals equal the ring's") {
  std::mt19937_64 rng(17);
  for (int p = 1; p <= 40; ++p)
    for (int c = 0; c < 8; ++c)
      for (std::size_t per_chunk : {1u, 3u}) {
        const Presteps k = c == 0 ? presteps_last_late(p) : random_valid_presteps(p, rng);
        const auto n = static_cast<std::size_t>(p);
        const std::size_t count = per_chunk * n;
        CAPTURE(p);
        CAPTURE(count);
        CAPTURE(show(k));
        const Schedule s = allreduce_pre_reduced_ring(p, count, k);
        const ScheduleStats stats = schedule_stats(s);
        const ScheduleStats ring = schedule_stats(allreduce_ring(p, count));
        std::size_t puts = 0, ring_puts = 0, reduced = 0, ring_reduced = 0;
        auto kk = [&](int i) { return static_cast<std::size_t>(k[at((i % p + p) % p)]); };
        for (int r = 0; r < p; ++r) {
          CAPTURE(r);
          const RankStats& got = stats.per_rank[at(r)];
          const std::size_t want_puts = 2 * (n - 1) + kk(r) - kk(r + 2);
          CHECK(got.puts == want_puts);
          CHECK(got.elems_sent == per_chunk * want_puts);
          CHECK(got.elems_reduced == per_chunk * (n - 1 - kk(r) + kk(r - 1)));
          CHECK(s.flag_count(r) == 2 * (n - 1) + kk(r - 1) - kk(r + 1));
          puts += got.puts;
          ring_puts += ring.per_rank[at(r)].puts;
          reduced += got.elems_reduced;
          ring_reduced += ring.per_rank[at(r)].elems_reduced;
        }
        CHECK(puts == ring_puts);
        CHECK(reduced == ring_reduced);
        CHECK(stats.rounds == ring.rounds);
      }
}

TEST_CASE("pre_reduced_ring with presteps_last_late: ids 0..P-4 put 2P, P-3 2P-1, P-2 P, the late P-1 P+1") {
  for (int p = 4; p <= 40; ++p) {
    CAPTURE(p);
    const auto n = static_cast<std::size_t>(p);
    const ScheduleStats stats = schedule_stats(allreduce_pre_reduced_ring(p, 2 * n, presteps_last_late(p)));
    for (int r = 0; r + 3 < p; ++r) CHECK(stats.per_rank[at(r)].puts == 2 * n);
    CHECK(stats.per_rank[at(p - 3)].puts == 2 * n - 1);
    CHECK(stats.per_rank[at(p - 2)].puts == n);
    CHECK(stats.per_rank[at(p - 1)].puts == n + 1);
    CHECK(stats.per_rank[at(p - 1)].elems_reduced == 2 * (n - 1));  // P-1 chunks of 2
  }
}

TEST_CASE("pre_reduced_ring with k = 0 moves what the ring moves, rank by rank, for any count") {
  for (int p = 1; p <= 20; ++p)
    for (std::size_t count : {std::size_t{0}, std::size_t{1}, static_cast<std::size_t>(p) + 1, std::size_t{1000}}) {
      CAPTURE(p);
      CAPTURE(count);
      const ScheduleStats prr = schedule_stats(allreduce_pre_reduced_ring(p, count, {}));
      const ScheduleStats ring = schedule_stats(allreduce_ring(p, count));
      CHECK(prr.rounds == ring.rounds);
      for (int r = 0; r < p; ++r) {
        CHECK(prr.per_rank[at(r)].puts == ring.per_rank[at(r)].puts);
        CHECK(prr.per_rank[at(r)].elems_sent == ring.per_rank[at(r)].elems_sent);
        CHECK(prr.per_rank[at(r)].elems_reduced == ring.per_rank[at(r)].elems_reduced);
      }
    }
}

TEST_CASE("pre_reduced_ring scratch: at most 2 count per rank, schedule maximum 2 count for every k") {
  std::mt19937_64 rng(19);
  for (int p = 1; p <= 32; ++p)
    for (std::size_t count : pap_counts(p))
      for (int c = 0; c < 6; ++c) {
        const Presteps k = c == 0 ? presteps_last_late(p) : random_valid_presteps(p, rng);
        CAPTURE(p);
        CAPTURE(count);
        const Schedule s = allreduce_pre_reduced_ring(p, count, k);
        const Schedule plain = allreduce_pre_reduced_ring(p, count, {});
        const std::size_t bound = p == 1 ? 0 : 2 * count;
        CHECK(s.max_scratch_elems() == bound);
        CHECK(plain.max_scratch_elems() == bound);
        for (int r = 0; r < p; ++r) {
          CHECK(s.scratch_elems(r) <= bound);
          CHECK(project(s, r).max_scratch_elems == project(plain, r).max_scratch_elems);
        }
        CHECK(s.max_flag_count() <= 2 * static_cast<std::uint32_t>(p));
      }
}

TEST_CASE("sorted_linear_tree costs are the chain's: ends q puts, inner ranks 2q; scratch 2 count") {
  for (int p = 1; p <= 16; ++p)
    for (std::size_t count : {1u, 12u, 13u, 100u})
      for (std::size_t segment : {1u, 5u, 100u}) {
        CAPTURE(p);
        CAPTURE(count);
        CAPTURE(segment);
        const Schedule slt = allreduce_sorted_linear_tree(p, count, segment);
        const ScheduleStats stats = schedule_stats(slt);
        const std::size_t q = (count + segment - 1) / segment;
        for (int r = 0; r < p; ++r) {
          const bool end = r == 0 || r == p - 1;
          CHECK(stats.per_rank[at(r)].puts == (p == 1 ? 0 : end ? q : 2 * q));
          CHECK(stats.per_rank[at(r)].elems_sent == (p == 1 ? 0 : end ? count : 2 * count));
          CHECK(stats.per_rank[at(r)].elems_reduced == (r == 0 ? 0 : count));
        }
        CHECK(stats.rounds == 2 * static_cast<std::size_t>(p - 1));
        CHECK(slt.max_scratch_elems() == (p == 1 ? 0 : 2 * count));
      }
}

TEST_CASE("catalogue: the arrival-ordered entries, their binding, segment default and presteps") {
  struct Entry {
    const char* name;
    ArrivalOrder arrival;
    bool pipelined;
  };
  for (const Entry& e : {Entry{"sorted_linear_tree", ArrivalOrder::estimated, true},
                         Entry{"pre_reduced_ring", ArrivalOrder::estimated, false},
                         Entry{"arrival_chain", ArrivalOrder::ticket, true},
                         Entry{"arrival_prr", ArrivalOrder::ticket, false}}) {
    CAPTURE(std::string(e.name));
    const Algorithm* a = find_allreduce(e.name);
    REQUIRE(a != nullptr);
    CHECK(a->arrival == e.arrival);
    CHECK(a->pipelined == e.pipelined);
    CHECK(a->needs_commutative);
    CHECK(a->default_segment_bytes == (e.pipelined ? 128u * 1024u : 0u));
  }
  // arrival_prr defaults to presteps_all_ahead, pre_reduced_ring to k = 0;
  // both take explicit presteps.
  const Schedule ahead = find_allreduce("arrival_prr")->make(6, 60, {}, kElemBytes);
  const Schedule plain = find_allreduce("pre_reduced_ring")->make(6, 60, {}, kElemBytes);
  CHECK(schedule_stats(ahead).per_rank[5].puts == 6);  // P: reduces every chunk last
  CHECK(schedule_stats(plain).per_rank[5].puts == 10);  // 2(P-1)
  AlgorithmParams params;
  params.presteps = presteps_last_late(6);
  for (const char* name : {"pre_reduced_ring", "arrival_prr"})
    CHECK(schedule_stats(find_allreduce(name)->make(6, 60, params, kElemBytes)).per_rank[5].puts == 7);  // P + 1
  // SLT's default segment: 128 KiB of 4-byte elements, i.e. 32768 elements.
  const Schedule one = find_allreduce("sorted_linear_tree")->make(3, 32768, {}, kElemBytes);
  const Schedule two = find_allreduce("sorted_linear_tree")->make(3, 32769, {}, kElemBytes);
  CHECK(schedule_stats(one).per_rank[0].puts == 1);
  CHECK(schedule_stats(two).per_rank[0].puts == 2);
}

// ---------------------------------------------------------------------------
// The late rank
// ---------------------------------------------------------------------------

using test::LeftAfter;
using test::left_after;
using test::steps_of;

TEST_CASE("SLT: the last rank reduces and puts once per segment; no reduction of the others waits on it") {
  for (int p = 2; p <= 24; ++p)
    for (std::size_t segment : {1u, 4u, 100u}) {
      CAPTURE(p);
      CAPTURE(segment);
      const std::size_t count = 40, q = (count + segment - 1) / segment;
      const Schedule s = allreduce_sorted_linear_tree(p, count, segment);
      CHECK(steps_of(s, p - 1, StepKind::reduce) == q);
      CHECK(steps_of(s, p - 1, StepKind::put) == q);
      CHECK(steps_of(s, p - 1, StepKind::copy) == 0);
      const LeftAfter left = left_after(s, p - 1);
      CHECK(left.reduces == 0);
      CHECK(left.transfers == q * static_cast<std::size_t>(p - 2));  // the return pass below P-2
    }
}

// Others' reductions that wait on the last rank, count >= P: the ring
// P(P-1)/2 (chunk c: the c hops after it, chunk P-1: all P-1); PRR with
// presteps_last_late P-1 (only chunk P-1, which the late rank starts); PRR
// with every chunk from rank 0 none.
TEST_CASE("PRR: what waits on a late last rank, by k") {
  for (int p = 2; p <= 24; ++p) {
    CAPTURE(p);
    const auto n = static_cast<std::size_t>(p);
    const std::size_t count = 3 * n;
    CHECK(left_after(allreduce_pre_reduced_ring(p, count, {}), p - 1).reduces == n * (n - 1) / 2);
    CHECK(left_after(allreduce_pre_reduced_ring(p, count, presteps_last_late(p)), p - 1).reduces == n - 1);
    CHECK(left_after(allreduce_pre_reduced_ring(p, count, presteps_all_ahead(p)), p - 1).reduces == 0);
  }
}
