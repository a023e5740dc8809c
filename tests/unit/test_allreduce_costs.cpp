// Checks the per-rank puts, elements sent and reduced, rounds and scratch of each allreduce against docs/algorithms.md.
#include <earlybird/collectives/allreduce.hpp>
#include <earlybird/collectives/partition.hpp>
#include <earlybird/collectives/schedule.hpp>

#include <doctest/doctest.h>

#include <cstddef>

using namespace earlybird::coll;

namespace {

struct Expected {
  std::size_t puts, elems_sent, elems_reduced;
};

void check_rank(const ScheduleStats& stats, int rank, const Expected& e) {
  CAPTURE(rank);
  const RankStats& got = stats.per_rank[static_cast<std::size_t>(rank)];
  CHECK(got.puts == e.puts);
  CHECK(got.elems_sent == e.elems_sent);
  CHECK(got.elems_reduced == e.elems_reduced);
}

std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

std::size_t chunk_of(std::size_t count, int p, int index) { return chunk(count, p, index % p).count; }

std::size_t log2_exact(int p) { return static_cast<std::size_t>(ceil_log2(p)); }

}  // namespace

TEST_CASE("ring, count divisible by P: 2(P-1) puts, 2(P-1)/P*count sent, (P-1)/P*count reduced, 2(P-1) rounds") {
  for (int p = 1; p <= 24; ++p) {
    for (std::size_t per_rank : {1u, 3u, 16u}) {
      const auto n = static_cast<std::size_t>(p);
      const std::size_t count = per_rank * n;
      CAPTURE(p);
      CAPTURE(count);
      const Schedule s = allreduce_ring(p, count);
      const ScheduleStats stats = schedule_stats(s);
      for (int r = 0; r < p; ++r) {
        check_rank(stats, r, {2 * (n - 1), 2 * (n - 1) * count / n, (n - 1) * count / n});
        CHECK(s.scratch_elems(r) == 2 * (n - 1) * per_rank);
      }
      CHECK(stats.rounds == 2 * (n - 1));
    }
  }
}

TEST_CASE("ring, any count: rank r sends all chunks but c(r+1) and c(r+2), reduces all but c(r)") {
  for (int p = 1; p <= 20; ++p) {
    const auto n = static_cast<std::size_t>(p);
    for (std::size_t count : {n + 1, 7 * n + 5, std::size_t{1000}}) {
      CAPTURE(p);
      CAPTURE(count);
      const ScheduleStats stats = schedule_stats(allreduce_ring(p, count));
      for (int r = 0; r < p; ++r) {
        const std::size_t next = chunk_of(count, p, r + 1), after = chunk_of(count, p, r + 2);
        check_rank(stats, r, {2 * (n - 1), 2 * count - next - after, count - chunk_of(count, p, r)});
      }
      CHECK(stats.rounds == 2 * (n - 1));
    }
  }
}

TEST_CASE("ring with count < P drops the steps of empty chunks") {
  const ScheduleStats stats = schedule_stats(allreduce_ring(8, 3));
  std::size_t puts = 0;
  for (const RankStats& r : stats.per_rank) puts += r.puts;
  CHECK(puts == 2 * 3 * 7);  // each non-empty chunk travels P-1 hops twice
  CHECK(schedule_stats(allreduce_ring(8, 0)).rounds == 0);
}

TEST_CASE("segmented ring: 2(P-1)*ceil((count/P)/segment) puts, the ring's elements and rounds") {
  for (int p = 1; p <= 16; ++p) {
    for (std::size_t per_rank : {1u, 12u, 13u}) {
      for (std::size_t segment : {1u, 4u, 5u, 100u}) {
        const auto n = static_cast<std::size_t>(p);
        const std::size_t count = per_rank * n;
        CAPTURE(p);
        CAPTURE(count);
        CAPTURE(segment);
        const ScheduleStats stats = schedule_stats(allreduce_segmented_ring(p, count, segment));
        for (int r = 0; r < p; ++r)
          check_rank(stats, r,
                     {2 * (n - 1) * ceil_div(per_rank, segment), 2 * (n - 1) * per_rank, (n - 1) * per_rank});
        CHECK(stats.rounds == 2 * (n - 1));
      }
    }
  }
}

TEST_CASE("segmented ring with one segment per chunk is the ring") {
  const ScheduleStats ring = schedule_stats(allreduce_ring(6, 60));
  const ScheduleStats seg = schedule_stats(allreduce_segmented_ring(6, 60, 10));
  CHECK(ring.rounds == seg.rounds);
  for (int r = 0; r < 6; ++r) {
    CHECK(ring.per_rank[r].puts == seg.per_rank[r].puts);
    CHECK(ring.per_rank[r].elems_sent == seg.per_rank[r].elems_sent);
  }
}

TEST_CASE("recursive doubling, P a power of two: log2 P puts of count elements, log2 P rounds") {
  for (int p : {1, 2, 4, 8, 16, 32, 64, 128}) {
    for (std::size_t count : {1u, 7u, 1000u}) {
      CAPTURE(p);
      CAPTURE(count);
      const Schedule s = allreduce_recursive_doubling(p, count);
      const ScheduleStats stats = schedule_stats(s);
      const std::size_t l = log2_exact(p);
      for (int r = 0; r < p; ++r) check_rank(stats, r, {l, count * l, count * l});
      CHECK(stats.rounds == l);
      CHECK(s.max_scratch_elems() == (p == 1 ? 0 : l * count));
    }
  }
}

TEST_CASE("recursive doubling, other P: fold, log2 P' butterfly rounds, unfold: log2 P' + 2 rounds") {
  for (int p : {3, 5, 6, 7, 12, 100, 127}) {
    for (std::size_t count : {1u, 10u}) {
      CAPTURE(p);
      CAPTURE(count);
      const Schedule s = allreduce_recursive_doubling(p, count);
      const ScheduleStats stats = schedule_stats(s);
      const int core = floor_pow2(p), extra = p - core;
      const std::size_t l = log2_exact(core);
      for (int r = 0; r < p; ++r) {
        if (r < extra)  // receives a fold, sends the unfold
          check_rank(stats, r, {l + 1, (l + 1) * count, (l + 1) * count});
        else if (r < core)
          check_rank(stats, r, {l, l * count, l * count});
        else  // folds into rank r - core, then waits for the result
          check_rank(stats, r, {1, count, 0});
      }
      CHECK(stats.rounds == l + 2);
      CHECK(s.max_scratch_elems() == (l + 1) * count);
    }
  }
}

TEST_CASE("count 0: no transfers at all") {
  for (const Algorithm& algorithm : allreduce_algorithms()) {
    const Schedule s = algorithm.make(7, 0, {}, 4);
    CHECK(s.steps().empty());
    CHECK(schedule_stats(s).rounds == 0);
    CHECK(s.max_scratch_elems() == 0);
    CHECK(s.max_flag_count() == 0);
  }
}
