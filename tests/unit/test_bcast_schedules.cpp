// Verifies every bcast algorithm symbolically (P = 1..64 and large P, many counts, seeds and segment sizes,
// and chained after a reduce phase), and checks per-rank puts, elements sent, rounds and scratch against
// docs/algorithms.md.
#include "bcast/bcast_phases.hpp"

#include <earlybird/collectives/bcast.hpp>
#include <earlybird/collectives/builder.hpp>
#include <earlybird/collectives/partition.hpp>
#include <earlybird/collectives/verify.hpp>

#include "unit_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

using namespace earlybird::coll;
using namespace earlybird::coll::test;

namespace {

constexpr std::size_t kElemBytes = 4;

void check_verified(const Schedule& s, std::uint64_t seeds) { check_verified_as(s, Collective::bcast, seeds); }

struct Pipelined {
  const char* name;
  Schedule (*make)(int, std::size_t, std::size_t);
};
const Pipelined kPipelined[] = {{"chain", bcast_chain}, {"binary_tree", bcast_binary_tree}};

// Several segments per vector, from one element up (not for long vectors:
// their schedules would be all steps and no insight).
std::vector<std::size_t> segments_for(std::size_t count) {
  if (count > 100) return {count / 7, count / 4 + 1};
  return {1, 3, count / 4 + 1};
}

std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }
std::size_t chunk_of(std::size_t count, int p, int i) { return chunk(count, p, i).count; }

// Binomial tree with contiguous subtrees, written independently of trees.cpp.
int subtree_end(int r, int p) { return r == 0 ? p : std::min(r + (r & -r), p); }
std::size_t binomial_children(int r, int p) {
  const int span = r == 0 ? static_cast<int>(std::bit_ceil(static_cast<unsigned>(p))) : (r & -r);
  std::size_t children = 0;
  for (int half = span / 2; half >= 1; half /= 2) children += r + half < p ? 1 : 0;
  return children;
}
std::size_t max_popcount_below(int p) {
  int most = 0;
  for (int r = 0; r < p; ++r) most = std::max(most, std::popcount(static_cast<unsigned>(r)));
  return static_cast<std::size_t>(most);
}
std::size_t chunks_of_subtree(std::size_t count, int p, int r) {
  std::size_t elems = 0;
  for (int i = r; i < subtree_end(r, p); ++i) elems += chunk_of(count, p, i);
  return elems;
}

void check_rank(const ScheduleStats& stats, int rank, std::size_t puts, std::size_t sent) {
  CAPTURE(rank);
  const RankStats& got = stats.per_rank[static_cast<std::size_t>(rank)];
  CHECK(got.puts == puts);
  CHECK(got.elems_sent == sent);
  CHECK(got.elems_reduced == 0);
}

// A non-root rank receives the whole vector into scratch; the root needs none.
void check_scratch(const Schedule& s) {
  for (int r = 0; r < s.ranks(); ++r) CHECK(s.scratch_elems(r) == (r == 0 ? 0 : s.count()));
}

}  // namespace

TEST_CASE("every catalogue algorithm, P = 1..64, counts {0, 1, P-1, P, P+1, 1000, 10007}, 3 seeds") {
  for (const Algorithm& algorithm : bcast_algorithms()) {
    CHECK_FALSE(algorithm.needs_commutative);
    for (int p : swept_ranks()) {
      for (std::size_t count : test::vector_counts(p)) {
        CAPTURE(algorithm.name);
        CAPTURE(p);
        CAPTURE(count);
        const Schedule s = algorithm.make(p, count, {}, kElemBytes);
        check_verified(s, 3);
        CHECK(first_acknowledgement(s) == "");
      }
    }
  }
}

TEST_CASE("pipelined chain and binary tree with several segments, P = 1..64") {
  for (const Pipelined& algorithm : kPipelined) {
    for (int p : swept_ranks()) {
      for (std::size_t count : {std::size_t{7}, static_cast<std::size_t>(3 * p + 1), std::size_t{1000}}) {
        for (std::size_t segment : segments_for(count)) {
          CAPTURE(algorithm.name);
          CAPTURE(p);
          CAPTURE(count);
          CAPTURE(segment);
          const Schedule s = algorithm.make(p, count, segment);
          check_verified(s, 2);
          CHECK(first_acknowledgement(s) == "");
        }
      }
    }
  }
}

TEST_CASE("the catalogue's pipelined algorithms honour segment_elems and default to 512 KiB") {
  for (const char* name : {"chain", "binary_tree"}) {
    const Algorithm* algorithm = find_bcast(name);
    REQUIRE(algorithm != nullptr);
    CHECK(algorithm->pipelined);
    CHECK(algorithm->default_segment_bytes == 512 * 1024);
    const std::size_t count = 3 * 131072 + 5;  // 4-byte elements: four default segments
    const ScheduleStats by_default = schedule_stats(algorithm->make(4, count, {}, kElemBytes));
    CHECK(by_default.per_rank[0].puts == 4 * (std::string_view(name) == "chain" ? 1 : 2));
    const ScheduleStats small = schedule_stats(algorithm->make(4, 100, segments_of(10), kElemBytes));
    CHECK(small.per_rank[0].puts == 10 * (std::string_view(name) == "chain" ? 1 : 2));
  }
  for (const char* name : {"binomial", "scatter_allgather"}) {
    REQUIRE(find_bcast(name) != nullptr);
    CHECK_FALSE(find_bcast(name)->pipelined);
  }
  CHECK(find_bcast("nonexistent") == nullptr);
}

TEST_CASE("large P: every algorithm for P in {100, 127, 128, 1000}, counts {0, 1, 37, P+1}, segments of 4") {
  for (const Algorithm& algorithm : bcast_algorithms()) {
    for (int p : {100, 127, 128, 1000}) {
      for (std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{37}, static_cast<std::size_t>(p) + 1}) {
        CAPTURE(algorithm.name);
        CAPTURE(p);
        CAPTURE(count);
        check_verified(algorithm.make(p, count, segments_of(4), kElemBytes), 1);
      }
    }
  }
}

// The phases as the allreduce compositions use them: rank 0's output already
// holds the vector (here: a copy standing in for the reduce phase).
TEST_CASE("phases chained after a reduce broadcast rank 0's output and never copy it onto itself") {
  using Phase = std::function<void(Builder&)>;
  const std::vector<std::pair<const char*, Phase>> phases{
      {"binomial", [](Builder& b) { detail::bcast_binomial_phase(b, Buffer::output); }},
      {"chain", [](Builder& b) { detail::bcast_chain_phase(b, Buffer::output, 3); }},
      {"binary_tree", [](Builder& b) { detail::bcast_binary_tree_phase(b, Buffer::output, 3); }},
      {"scatter_allgather", [](Builder& b) { detail::bcast_scatter_allgather_phase(b, Buffer::output); }},
  };
  for (const auto& [phase_name, phase] : phases) {
    const std::string name = phase_name;
    for (int p : {1, 2, 3, 5, 8, 13, 32}) {
      for (std::size_t count : {std::size_t{0}, std::size_t{1}, static_cast<std::size_t>(p) + 1, std::size_t{100}}) {
        CAPTURE(name);
        CAPTURE(p);
        CAPTURE(count);
        Builder b("chained", p, count);
        b.copy({0, Buffer::output, {0, count}}, {0, Buffer::input, {0, count}});
        phase(b);
        const Schedule s = std::move(b).finish();
        check_verified(s, 2);
        const auto phase_steps = s.steps().subspan(count == 0 ? 0 : 1);  // after the stand-in
        CHECK(std::none_of(phase_steps.begin(), phase_steps.end(), [](const Step& step) {
          return step.dst.rank == 0 && step.dst.buffer == Buffer::output;
        }));
      }
    }
  }
}

TEST_CASE("binomial: root ceil(log2 P) puts, one put of count per child, rounds = max set bits of r < P") {
  for (int p = 1; p <= 40; ++p) {
    for (std::size_t count : {1u, 17u}) {
      CAPTURE(p);
      CAPTURE(count);
      const Schedule s = bcast_binomial(p, count);
      const ScheduleStats stats = schedule_stats(s);
      CHECK(binomial_children(0, p) == static_cast<std::size_t>(ceil_log2(p)));
      for (int r = 0; r < p; ++r) check_rank(stats, r, binomial_children(r, p), binomial_children(r, p) * count);
      CHECK(stats.rounds == max_popcount_below(p));
      check_scratch(s);
    }
  }
}

TEST_CASE("chain: q = ceil(count/s) puts of count elements on every rank but the last, rounds P-1") {
  for (int p = 1; p <= 24; ++p) {
    for (std::size_t count : {1u, 10u, 64u}) {
      for (std::size_t segment : {0u, 1u, 3u, 64u}) {
        CAPTURE(p);
        CAPTURE(count);
        CAPTURE(segment);
        const Schedule s = bcast_chain(p, count, segment);
        const ScheduleStats stats = schedule_stats(s);
        const std::size_t q = segment == 0 ? 1 : ceil_div(count, segment);
        for (int r = 0; r < p; ++r) check_rank(stats, r, r + 1 < p ? q : 0, r + 1 < p ? count : 0);
        CHECK(stats.rounds == static_cast<std::size_t>(p - 1));
        check_scratch(s);
      }
    }
  }
}

TEST_CASE("binary tree: q puts of count per child (2r+1, 2r+2), rounds floor(log2 P)") {
  for (int p = 1; p <= 40; ++p) {
    for (std::size_t count : {1u, 10u}) {
      for (std::size_t segment : {0u, 3u}) {
        CAPTURE(p);
        CAPTURE(count);
        CAPTURE(segment);
        const Schedule s = bcast_binary_tree(p, count, segment);
        const ScheduleStats stats = schedule_stats(s);
        const std::size_t q = segment == 0 ? 1 : ceil_div(count, segment);
        for (int r = 0; r < p; ++r) {
          const std::size_t children = (2 * r + 1 < p ? 1 : 0) + (2 * r + 2 < p ? 1 : 0);
          check_rank(stats, r, children * q, children * count);
        }
        CHECK(stats.rounds == static_cast<std::size_t>(std::bit_width(static_cast<unsigned>(p)) - 1));
        check_scratch(s);
      }
    }
  }
}

TEST_CASE("scatter_allgather, count >= P: binomial scatter of subtrees, ring skips chunks the receiver holds") {
  for (int p = 1; p <= 40; ++p) {
    for (std::size_t count : {static_cast<std::size_t>(p), static_cast<std::size_t>(3 * p + 2), std::size_t{1000}}) {
      CAPTURE(p);
      CAPTURE(count);
      const Schedule s = bcast_scatter_allgather(p, count);
      const ScheduleStats stats = schedule_stats(s);
      for (int r = 0; r < p; ++r) {
        const std::size_t scatter_sent = chunks_of_subtree(count, p, r) - chunk_of(count, p, r);
        std::size_t ring_puts = 0, ring_sent = 0;
        if (r + 1 < p) {
          ring_puts = static_cast<std::size_t>(p - (subtree_end(r + 1, p) - (r + 1)));
          ring_sent = count - chunks_of_subtree(count, p, r + 1);
        }
        check_rank(stats, r, binomial_children(r, p) + ring_puts, scatter_sent + ring_sent);
      }
      CHECK(stats.rounds == static_cast<std::size_t>(p - 1));
      check_scratch(s);
    }
  }
}

TEST_CASE("scatter_allgather: every non-root rank receives each element exactly once") {
  for (int p : {2, 3, 7, 16, 33}) {
    for (std::size_t count : {std::size_t{1}, static_cast<std::size_t>(p) - 1, std::size_t{500}}) {
      CAPTURE(p);
      CAPTURE(count);
      const Schedule s = bcast_scatter_allgather(p, count);
      std::vector<std::size_t> received(static_cast<std::size_t>(p), 0);
      for (const Step& step : s.steps())
        if (step.kind == StepKind::put) received[static_cast<std::size_t>(step.dst.rank)] += step.dst.range.count;
      CHECK(received[0] == 0);
      for (int r = 1; r < p; ++r) CHECK(received[static_cast<std::size_t>(r)] == count);
    }
  }
}

TEST_CASE("count 0: no steps at all") {
  for (const Algorithm& algorithm : bcast_algorithms()) {
    CAPTURE(algorithm.name);
    const Schedule s = algorithm.make(7, 0, {}, kElemBytes);
    CHECK(s.steps().empty());
    CHECK(s.max_scratch_elems() == 0);
    CHECK(s.max_flag_count() == 0);
  }
}

// Over nodes of n consecutive ranks (tree_bcast.cpp, bcast_hierarchical).
namespace {

// Every transfer as (from, to), sorted.
std::vector<std::pair<int, int>> transfers(const Schedule& s) {
  std::vector<std::pair<int, int>> all;
  for (const Step& step : s.steps())
    if (step.is_transfer()) all.emplace_back(step.src.rank, step.dst.rank);
  std::sort(all.begin(), all.end());
  return all;
}

}  // namespace

TEST_CASE("hierarchical: verified over every node layout; N - 1 crossings per segment; binomial at powers of two") {
  for_each_node_layout(*find_bcast("hierarchical"), [](const Schedule& s, int p, int n, std::size_t segments) {
    check_verified(s, 1);
    if (segments == 0) return;
    CHECK(static_cast<std::size_t>(node_crossings(s, n)) == static_cast<std::size_t>(p / n - 1) * segments);
    if (segments == 1 && powers_of_two(p, n)) CHECK(transfers(s) == transfers(bcast_binomial(p, s.count())));
  });
  // Where the binomial tree splits a node: nodes of 3 (and of 6), one crossing against two.
  CHECK(node_crossings(bcast_hierarchical(6, 10, 3, 0), 3) == 1);
  CHECK(node_crossings(bcast_binomial(6, 10), 3) == 2);
  CHECK(node_crossings(bcast_hierarchical(12, 10, 6, 0), 6) == 1);
  CHECK(node_crossings(bcast_binomial(12, 10), 6) == 2);
}
