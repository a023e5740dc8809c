// Verifies every allgather algorithm symbolically (P = 1..64 and large P, many block sizes and seeds), and checks
// per-rank puts, elements sent, rounds and scratch against docs/algorithms.md.
#include <earlybird/collectives/allgather.hpp>
#include <earlybird/collectives/partition.hpp>
#include <earlybird/collectives/verify.hpp>

#include "unit_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

using namespace earlybird::coll;
using namespace earlybird::coll::test;

namespace {

constexpr std::size_t kElemBytes = 4;

// Blocks per rank; the output is P times larger.

struct Expected {
  std::size_t puts, elems_sent;
};

void check_rank(const ScheduleStats& stats, int rank, const Expected& e) {
  CAPTURE(rank);
  const RankStats& got = stats.per_rank[static_cast<std::size_t>(rank)];
  CHECK(got.puts == e.puts);
  CHECK(got.elems_sent == e.elems_sent);
  CHECK(got.elems_reduced == 0);
}

std::size_t log2_floor(int p) { return static_cast<std::size_t>(ceil_log2(floor_pow2(p))); }

// allgather_recursive_doubling's puts and elements per rank, as
// docs/algorithms.md states them.
Expected recursive_doubling_expected(int p, int r, std::size_t count) {
  const int core = floor_pow2(p), extra = p - core;
  if (r >= core) return {1, count};
  Expected e{0, 0};
  for (int group = 1; group < core; group *= 2) {
    const int first = r & ~(group - 1);
    const int extras = std::clamp(extra - first, 0, group);
    e.puts += 1 + (extras > 0 ? 1 : 0);
    e.elems_sent += static_cast<std::size_t>(group + extras) * count;
  }
  if (r < extra) {
    e.puts += 1 + (r < extra - 1 ? 1 : 0);
    e.elems_sent += static_cast<std::size_t>(p - 1) * count;
  }
  return e;
}

}  // namespace

TEST_CASE("every catalogue algorithm: P = 1..64 x blocks {0, 1, P-1, P, P+1, 1000} x 3 seeds, blocks of 10007") {
  for (const Algorithm& algorithm : allgather_algorithms()) CHECK_FALSE(algorithm.needs_commutative);
  check_blockwise_catalogue(Collective::allgather);
}

TEST_CASE("large P: every catalogue algorithm, P in {100, 127, 128, 1000}, blocks {0, 1, 3}") {
  check_blockwise_catalogue_large_p(Collective::allgather);
}

TEST_CASE("ring: P-1 puts of one block, (P-1) count sent, P-1 rounds, P-1 blocks of scratch") {
  for (int p = 1; p <= 32; ++p) {
    for (std::size_t count : {1u, 7u}) {
      CAPTURE(p);
      CAPTURE(count);
      const auto n = static_cast<std::size_t>(p);
      const Schedule s = allgather_ring(p, count);
      const ScheduleStats stats = schedule_stats(s);
      for (int r = 0; r < p; ++r) check_rank(stats, r, {n - 1, (n - 1) * count});
      CHECK(stats.rounds == n - 1);
      CHECK(s.max_scratch_elems() == (n - 1) * count);
    }
  }
}

// Bruck's dependency depth: the last round of a P that is no power of two
// sends only the first P - P' positions, which arrived early.
std::size_t bruck_rounds(int p) {
  const int core = floor_pow2(p);
  if (core == p) return log2_floor(p);
  return std::max(log2_floor(p), 1 + static_cast<std::size_t>(ceil_log2(p - core)));
}

TEST_CASE("bruck: ceil(log2 P) puts, (P-1) count sent, P blocks of scratch, rounds as bruck_rounds") {
  for (int p = 1; p <= 40; ++p) {
    for (std::size_t count : {1u, 7u}) {
      CAPTURE(p);
      CAPTURE(count);
      const auto n = static_cast<std::size_t>(p);
      const auto l = static_cast<std::size_t>(ceil_log2(p));
      const Schedule s = allgather_bruck(p, count);
      const ScheduleStats stats = schedule_stats(s);
      for (int r = 0; r < p; ++r) check_rank(stats, r, {l, (n - 1) * count});
      CHECK(stats.rounds == bruck_rounds(p));
      CHECK(s.max_scratch_elems() == n * count);
    }
  }
}

TEST_CASE("recursive doubling, P a power of two: log2 P puts, (P-1) count sent, log2 P rounds") {
  for (int p : {1, 2, 4, 8, 16, 32, 64}) {
    for (std::size_t count : {1u, 5u}) {
      CAPTURE(p);
      CAPTURE(count);
      const auto n = static_cast<std::size_t>(p);
      const Schedule s = allgather_recursive_doubling(p, count);
      const ScheduleStats stats = schedule_stats(s);
      for (int r = 0; r < p; ++r) check_rank(stats, r, {log2_floor(p), (n - 1) * count});
      CHECK(stats.rounds == log2_floor(p));
      CHECK(s.max_scratch_elems() == n * count);
    }
  }
}

TEST_CASE("recursive doubling, other P: fold, butterfly over super-blocks, unfold: log2 P' + 1 + [e > P'/2] rounds") {
  for (int p = 3; p <= 40; ++p) {
    if (p == floor_pow2(p)) continue;
    for (std::size_t count : {1u, 5u}) {
      CAPTURE(p);
      CAPTURE(count);
      const Schedule s = allgather_recursive_doubling(p, count);
      const ScheduleStats stats = schedule_stats(s);
      for (int r = 0; r < p; ++r) check_rank(stats, r, recursive_doubling_expected(p, r, count));
      const int core = floor_pow2(p);
      CHECK(stats.rounds == log2_floor(p) + 1 + (p - core > core / 2 ? 1 : 0));
      CHECK(s.max_scratch_elems() == static_cast<std::size_t>(p) * count);
    }
  }
}

TEST_CASE("every rank receives every block but its own exactly once") {
  for (const Algorithm& algorithm : allgather_algorithms()) {
    for (int p : {1, 2, 3, 6, 8, 11, 16, 17}) {
      CAPTURE(algorithm.name);
      CAPTURE(p);
      const std::size_t count = 3;
      const Schedule s = algorithm.make(p, count, {}, kElemBytes);
      std::vector<std::size_t> received(static_cast<std::size_t>(p), 0);
      for (const Step& step : s.steps())
        if (step.kind == StepKind::put) received[static_cast<std::size_t>(step.dst.rank)] += step.dst.range.count;
      const std::size_t others = static_cast<std::size_t>(p - 1) * count;
      for (int r = 0; r < p; ++r) CHECK(received[static_cast<std::size_t>(r)] == others);
    }
  }
}

TEST_CASE("count 0: no steps at all") {
  for (const Algorithm& algorithm : allgather_algorithms()) {
    CAPTURE(algorithm.name);
    const Schedule s = algorithm.make(7, 0, {}, kElemBytes);
    CHECK(s.steps().empty());
    CHECK(s.max_scratch_elems() == 0);
    CHECK(s.max_flag_count() == 0);
  }
}

// Over nodes of n consecutive ranks (hierarchical.cpp).
TEST_CASE("hierarchical: verified over every node layout; P - 1 puts per rank; a block crosses to each other node once") {
  // Each rank's block goes once to every other node: P (N - 1) crossings,
  // against the flat ring's N (P - 1).
  check_hierarchical_blockwise(Collective::allgather, allgather_ring, [](const ScheduleStats& stats, int p, std::size_t count) {
    const auto others = static_cast<std::size_t>(p - 1);
    for (int r = 0; r < p; ++r) check_rank(stats, r, {others, others * count});
  });
  CHECK_THROWS_WITH_AS(allgather_hierarchical(6, 4, 4), "allgather_hierarchical: nodes of 4 ranks do not divide the 6 ranks",
                       std::invalid_argument);
}
