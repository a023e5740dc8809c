// Verifies every reduce_scatter algorithm symbolically (P = 1..64 and large P, many block sizes and seeds), and
// checks per-rank puts, elements sent and reduced, rounds and scratch against docs/algorithms.md.
#include <earlybird/collectives/partition.hpp>
#include <earlybird/collectives/reduce_scatter.hpp>
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

// Output blocks; every input is P times larger.

struct Expected {
  std::size_t puts = 0, elems_sent = 0, elems_reduced = 0;
};

void check_rank(const ScheduleStats& stats, int rank, const Expected& e) {
  CAPTURE(rank);
  const RankStats& got = stats.per_rank[static_cast<std::size_t>(rank)];
  CHECK(got.puts == e.puts);
  CHECK(got.elems_sent == e.elems_sent);
  CHECK(got.elems_reduced == e.elems_reduced);
}

std::size_t log2_floor(int p) { return static_cast<std::size_t>(ceil_log2(floor_pow2(p))); }

// reduce_scatter_recursive_halving's figures per rank, as docs/algorithms.md
// states them.
Expected recursive_halving_expected(int p, int r, std::size_t count) {
  const int core = floor_pow2(p), extra = p - core;
  const auto blocks = [&](int b) { return static_cast<std::size_t>(b) * count; };
  if (r >= core) return {1, blocks(p), 0};
  Expected e;
  for (int d = core / 2; d >= 1; d /= 2) {
    const auto extras = [&](int half) { return std::clamp(extra - half, 0, d); };
    const int sent_half = (r ^ d) & ~(d - 1), kept_half = r & ~(d - 1);
    e.puts += 1 + (extras(sent_half) > 0 ? 1 : 0);
    e.elems_sent += blocks(d + extras(sent_half));
    e.elems_reduced += blocks(d + extras(kept_half));
  }
  if (r < extra) {
    e.elems_reduced += blocks(p);
    e.puts += 1;
    e.elems_sent += count;
  }
  return e;
}

std::size_t recursive_halving_scratch(int p, std::size_t count) {
  const int core = floor_pow2(p), extra = p - core;
  std::size_t blocks = extra > 0 ? static_cast<std::size_t>(p) : 0;
  for (int d = core / 2; d >= 1; d /= 2) blocks += static_cast<std::size_t>(d + std::min(d, extra));
  return blocks * count;
}

}  // namespace

TEST_CASE("every catalogue algorithm: P = 1..64 x blocks {0, 1, P-1, P, P+1, 1000} x 3 seeds, blocks of 10007") {
  for (const Algorithm& algorithm : reduce_scatter_algorithms())
    CHECK(algorithm.needs_commutative == (algorithm.executor == Executor::steps));
  check_blockwise_catalogue(Collective::reduce_scatter);
}

TEST_CASE("large P: every catalogue algorithm, P in {100, 127, 128, 1000}, blocks {0, 1, 3}") {
  check_blockwise_catalogue_large_p(Collective::reduce_scatter);
}

TEST_CASE("ring and recursive halving do not keep rank order: the verifier's ordered mode rejects both for P >= 3") {
  for (const Algorithm& algorithm : reduce_scatter_algorithms()) {
    if (!algorithm.needs_commutative) continue;
    CAPTURE(algorithm.name);
    VerifyOptions ordered;
    ordered.ordered = true;
    CHECK_FALSE(verify(algorithm.make(4, 2, {}, kElemBytes), Collective::reduce_scatter, ordered).ok);
    CHECK_FALSE(verify(algorithm.make(5, 2, {}, kElemBytes), Collective::reduce_scatter, ordered).ok);
  }
}

TEST_CASE("inline_flags keeps rank order: the verifier's ordered mode accepts it") {
  VerifyOptions ordered;
  ordered.ordered = true;
  for (int p : {1, 2, 3, 4, 5, 8})
    for (std::size_t count : {0u, 1u, 2u, 7u}) {
      CAPTURE(p);
      CAPTURE(count);
      CHECK(verify(reduce_scatter_inline_flags(p, count), Collective::reduce_scatter, ordered).ok);
    }
}

TEST_CASE("ring: P-1 puts, (P-1) count sent and reduced, P-1 rounds, P-1 blocks of scratch") {
  for (int p = 1; p <= 32; ++p) {
    for (std::size_t count : {1u, 7u}) {
      CAPTURE(p);
      CAPTURE(count);
      const auto n = static_cast<std::size_t>(p);
      const Schedule s = reduce_scatter_ring(p, count);
      const ScheduleStats stats = schedule_stats(s);
      for (int r = 0; r < p; ++r) check_rank(stats, r, {n - 1, (n - 1) * count, (n - 1) * count});
      CHECK(stats.rounds == n - 1);
      CHECK(s.max_scratch_elems() == (n - 1) * count);
    }
  }
}

TEST_CASE("recursive halving, P a power of two: log2 P puts, (P-1) count sent and reduced, log2 P rounds") {
  for (int p : {1, 2, 4, 8, 16, 32, 64}) {
    for (std::size_t count : {1u, 5u}) {
      CAPTURE(p);
      CAPTURE(count);
      const auto n = static_cast<std::size_t>(p);
      const Schedule s = reduce_scatter_recursive_halving(p, count);
      const ScheduleStats stats = schedule_stats(s);
      for (int r = 0; r < p; ++r) check_rank(stats, r, {log2_floor(p), (n - 1) * count, (n - 1) * count});
      CHECK(stats.rounds == log2_floor(p));
      CHECK(s.max_scratch_elems() == (n - 1) * count);
    }
  }
}

TEST_CASE("recursive halving, other P: fold, halving over super-blocks, unfold: log2 P' + 1 + [e > P'/2] rounds") {
  for (int p = 3; p <= 40; ++p) {
    if (p == floor_pow2(p)) continue;
    for (std::size_t count : {1u, 5u}) {
      CAPTURE(p);
      CAPTURE(count);
      const Schedule s = reduce_scatter_recursive_halving(p, count);
      const ScheduleStats stats = schedule_stats(s);
      for (int r = 0; r < p; ++r) check_rank(stats, r, recursive_halving_expected(p, r, count));
      const int core = floor_pow2(p);
      CHECK(stats.rounds == log2_floor(p) + 1 + (p - core > core / 2 ? 1 : 0));
      CHECK(s.max_scratch_elems() == recursive_halving_scratch(p, count));
    }
  }
}

TEST_CASE("in place: each rank writes its output only after its last read of its input (ring and recursive halving: once)") {
  for (const Algorithm& algorithm : reduce_scatter_algorithms()) {
    for (int p : {1, 2, 3, 4, 6, 8, 9}) {
      CAPTURE(algorithm.name);
      CAPTURE(p);
      const Schedule s = algorithm.make(p, 3, {}, kElemBytes);
      std::vector<int> output_writes(static_cast<std::size_t>(p), 0);
      std::vector<bool> reads_after_write(static_cast<std::size_t>(p), false);
      for (const Step& step : s.steps()) {
        const auto r = static_cast<std::size_t>(step.owner);
        const bool reads_input = step.src.buffer == Buffer::input ||
                                 (step.kind == StepKind::reduce && step.left.buffer == Buffer::input);
        if (reads_input && output_writes[r] > 0 && step.dst.buffer != Buffer::output) reads_after_write[r] = true;
        if (step.dst.buffer == Buffer::output) ++output_writes[r];
      }
      for (int r = 0; r < p; ++r) {
        if (algorithm.needs_commutative) CHECK(output_writes[static_cast<std::size_t>(r)] == 1);
        CHECK(output_writes[static_cast<std::size_t>(r)] >= 1);
        CHECK_FALSE(reads_after_write[static_cast<std::size_t>(r)]);
      }
    }
  }
}

TEST_CASE("count 0: no steps at all") {
  for (const Algorithm& algorithm : reduce_scatter_algorithms()) {
    CAPTURE(algorithm.name);
    const Schedule s = algorithm.make(7, 0, {}, kElemBytes);
    CHECK(s.steps().empty());
    CHECK(s.max_scratch_elems() == 0);
    CHECK(s.max_flag_count() == 0);
  }
}

// Over nodes of n consecutive ranks (hierarchical.cpp).
TEST_CASE("hierarchical: verified over every node layout; P - 1 puts per rank; node sums cross to each other node once") {
  check_hierarchical_blockwise(Collective::reduce_scatter, reduce_scatter_ring,
                               [](const ScheduleStats& stats, int p, std::size_t count) {
                                 const auto others = static_cast<std::size_t>(p - 1);
                                 for (int r = 0; r < p; ++r) check_rank(stats, r, {others, others * count, others * count});
                               });
  CHECK_THROWS_WITH_AS(reduce_scatter_hierarchical(6, 4, 4),
                       "reduce_scatter_hierarchical: nodes of 4 ranks do not divide the 6 ranks", std::invalid_argument);
}
