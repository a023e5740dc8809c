// Checks the per-rank puts, elements sent and reduced, rounds, scratch and pipelined time of each reduce against docs/algorithms.md.
#include <earlybird/collectives/partition.hpp>
#include <earlybird/collectives/reduce.hpp>
#include <earlybird/collectives/schedule.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <vector>

using namespace earlybird::coll;

namespace {

struct Expected {
  std::size_t puts, elems_sent, elems_reduced, scratch;
};

void check_rank(const Schedule& s, const ScheduleStats& stats, int rank, const Expected& e) {
  CAPTURE(rank);
  const RankStats& got = stats.per_rank[static_cast<std::size_t>(rank)];
  CHECK(got.puts == e.puts);
  CHECK(got.elems_sent == e.elems_sent);
  CHECK(got.elems_reduced == e.elems_reduced);
  CHECK(s.scratch_elems(rank) == e.scratch);
}

std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

std::size_t floor_log2(int p) { return static_cast<std::size_t>(std::countr_zero(static_cast<unsigned>(floor_pow2(p)))); }

// Rank r's children in the binomial tree: r + 2^j for 2^j below r's lowest
// set bit (below P for rank 0) and r + 2^j < P.
std::size_t binomial_children(int r, int p) {
  std::size_t children = 0;
  for (int step = 1; step < p - r && (r == 0 || (r & step) == 0); step *= 2) ++children;
  return children;
}

// Children of every rank of the balanced preorder k-ary tree over [root, end).
void kary_children(int root, int end, int k, std::vector<std::size_t>& children) {
  const int rest = end - root - 1;
  const int parts = std::min(k, rest);
  children[static_cast<std::size_t>(root)] = static_cast<std::size_t>(std::max(parts, 0));
  for (int i = 0, begin = root + 1; i < parts; ++i) {
    const int size = rest / parts + (i < rest % parts ? 1 : 0);
    kary_children(begin, begin + size, k, children);
    begin += size;
  }
}

// The least d with 1 + k + ... + k^d >= P.
std::size_t kary_depth(int p, int k) {
  std::size_t depth = 0;
  for (long long level = 1, total = 1; total < p; ++depth) {
    level *= k;
    total += level;
  }
  return depth;
}

// Time of a schedule under the unidirectional single-port model, in units of
// one segment's transfer: a transfer of n elements takes ceil(n / unit), a
// rank takes part in one transfer at a time (sending or receiving), local
// steps take no time. Transfers start in program order, as soon as their
// dependencies are done and both ranks are free (list scheduling).
std::size_t unidirectional_time(const Schedule& s, std::size_t unit) {
  std::vector<std::size_t> finish(s.steps().size(), 0);
  std::vector<std::size_t> port_free(static_cast<std::size_t>(s.ranks()), 0);
  std::size_t end = 0;
  for (StepId id = 0; id < s.steps().size(); ++id) {
    std::size_t ready = 0;
    for (StepId d : s.deps(id)) ready = std::max(ready, finish[d]);
    const Step& step = s.steps()[id];
    finish[id] = ready;
    if (step.is_transfer()) {
      auto& sender = port_free[static_cast<std::size_t>(step.src.rank)];
      auto& receiver = port_free[static_cast<std::size_t>(step.dst.rank)];
      finish[id] = std::max({ready, sender, receiver}) + ceil_div(step.src.range.count, unit);
      sender = receiver = finish[id];
    }
    end = std::max(end, finish[id]);
  }
  return end;
}

const std::vector<int> kRanks{1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 17, 31, 32, 33, 64, 100};

}  // namespace

TEST_CASE("binomial: one put of the vector per non-root rank, children(r) vectors reduced, floor(log2 P) rounds") {
  for (int p : kRanks) {
    for (std::size_t count : {std::size_t{1}, std::size_t{10}, std::size_t{1001}}) {
      CAPTURE(p);
      CAPTURE(count);
      const Schedule s = reduce_binomial(p, count);
      const ScheduleStats stats = schedule_stats(s);
      for (int r = 0; r < p; ++r) {
        const std::size_t children = binomial_children(r, p);
        check_rank(s, stats, r, {r == 0 ? 0u : 1u, r == 0 ? 0 : count, children * count, children * count});
      }
      CHECK(binomial_children(0, p) == static_cast<std::size_t>(ceil_log2(p)));
      // Dependency depth: the deepest rank is 2^k - 1 (k set bits); rank 0's
      // ceil(log2 P) receives share one port, which the time model counts.
      CHECK(stats.rounds == floor_log2(p));
    }
  }
  CHECK(schedule_stats(reduce_binomial(16, 0)).rounds == 0);
  CHECK(reduce_binomial(16, 0).steps().empty());
}

TEST_CASE("chain: q puts of the vector per non-root rank, every rank but P-1 reduces the vector, P-1 rounds") {
  for (int p : kRanks) {
    for (std::size_t count : {std::size_t{1}, std::size_t{12}, std::size_t{1001}}) {
      for (std::size_t segment : {std::size_t{0}, std::size_t{1}, std::size_t{5}, std::size_t{100}}) {
        CAPTURE(p);
        CAPTURE(count);
        CAPTURE(segment);
        const std::size_t q = segment == 0 ? 1 : ceil_div(count, segment);
        const Schedule s = reduce_chain(p, count, segment);
        const ScheduleStats stats = schedule_stats(s);
        for (int r = 0; r < p; ++r) {
          const bool reduces = r < p - 1;
          check_rank(s, stats, r, {r == 0 ? 0 : q, r == 0 ? 0 : count, reduces ? count : 0, reduces ? count : 0});
        }
        CHECK(stats.rounds == static_cast<std::size_t>(p - 1));
      }
    }
  }
}

TEST_CASE("k-ary trees (binary = 2): q puts per non-root rank, children(r) vectors reduced, depth rounds") {
  for (int k : {1, 2, 3, 4, 7}) {
    for (int p : kRanks) {
      for (std::size_t count : {std::size_t{7}, std::size_t{1000}}) {
        for (std::size_t segment : {std::size_t{0}, std::size_t{3}, std::size_t{64}}) {
          CAPTURE(k);
          CAPTURE(p);
          CAPTURE(count);
          CAPTURE(segment);
          const std::size_t q = segment == 0 ? 1 : ceil_div(count, segment);
          const Schedule s = k == 2 ? reduce_binary_tree(p, count, segment) : reduce_kary_tree(p, count, k, segment);
          const ScheduleStats stats = schedule_stats(s);
          std::vector<std::size_t> children(static_cast<std::size_t>(p));
          kary_children(0, p, k, children);
          for (int r = 0; r < p; ++r) {
            const std::size_t c = children[static_cast<std::size_t>(r)];
            CHECK(c <= static_cast<std::size_t>(k));
            check_rank(s, stats, r, {r == 0 ? 0 : q, r == 0 ? 0 : count, c * count, c * count});
          }
          CHECK(stats.rounds == kary_depth(p, k));
        }
      }
    }
  }
  CHECK(kary_depth(7, 2) == 2);  // ceil(log2(P+1)) - 1
  CHECK(kary_depth(8, 2) == 3);
  CHECK(kary_depth(21, 4) == 2);
}

TEST_CASE("greedy: q puts of the vector per non-root rank, (P-1) vectors reduced in all") {
  for (int p : kRanks) {
    for (std::size_t count : {std::size_t{1}, std::size_t{40}, std::size_t{1001}}) {
      for (std::size_t segment : {std::size_t{0}, std::size_t{1}, std::size_t{9}}) {
        CAPTURE(p);
        CAPTURE(count);
        CAPTURE(segment);
        const std::size_t q = segment == 0 ? 1 : ceil_div(count, segment);
        const Schedule s = reduce_greedy(p, count, segment);
        const ScheduleStats stats = schedule_stats(s);
        std::size_t reduced = 0;
        for (int r = 0; r < p; ++r) {
          const RankStats& got = stats.per_rank[static_cast<std::size_t>(r)];
          CHECK(got.puts == (r == 0 ? 0 : q));
          CHECK(got.elems_sent == (r == 0 ? 0 : count));
          reduced += got.elems_reduced;
        }
        CHECK(reduced == static_cast<std::size_t>(p - 1) * count);
        if (p > 1) CHECK(stats.per_rank[0].elems_reduced >= count);
        CHECK(stats.rounds >= floor_log2(p));
        CHECK(stats.rounds <= static_cast<std::size_t>(p - 1));
      }
    }
  }
}

TEST_CASE("pipelined time: chain (P-1) + 2(q-1), binomial ceil(log2 P) q, trees T1 + period (q-1)") {
  const std::size_t unit = 4;
  for (int p : kRanks) {
    for (std::size_t q : {1u, 2u, 3u, 8u, 20u}) {
      CAPTURE(p);
      CAPTURE(q);
      const std::size_t count = q * unit;
      const auto n = static_cast<std::size_t>(p);
      const std::size_t chain = unidirectional_time(reduce_chain(p, count, unit), unit);
      if (p >= 3) CHECK(chain == (n - 1) + 2 * (q - 1));
      if (p == 2) CHECK(chain == q);  // rank 1 only sends, rank 0 only receives
      CHECK(unidirectional_time(reduce_binomial(p, count), unit) == static_cast<std::size_t>(ceil_log2(p)) * q);
      for (int k : {2, 3, 4}) {
        CAPTURE(k);
        std::vector<std::size_t> children(n);
        kary_children(0, p, k, children);
        // A rank's port serves its children's segments and its own send.
        std::size_t period = children[0];
        for (std::size_t r = 1; r < n; ++r) period = std::max(period, children[r] + 1);
        const std::size_t first = unidirectional_time(reduce_kary_tree(p, unit, k, unit), unit);
        CHECK(first <= static_cast<std::size_t>(k) * kary_depth(p, k));
        CHECK(unidirectional_time(reduce_kary_tree(p, count, k, unit), unit) == first + period * (q - 1));
      }
    }
  }
}

TEST_CASE("greedy takes no longer than chain, binomial and the trees; one segment takes ceil(log2 P)") {
  const std::size_t unit = 2;
  for (int p = 1; p <= 130; ++p) {
    const std::size_t log_p = static_cast<std::size_t>(ceil_log2(p));
    CHECK(unidirectional_time(reduce_greedy(p, unit, unit), unit) == (p == 1 ? 0 : log_p));
    for (std::size_t q : {2u, 3u, 5u, 16u, 33u}) {
      CAPTURE(p);
      CAPTURE(q);
      const std::size_t count = q * unit;
      const std::size_t greedy = unidirectional_time(reduce_greedy(p, count, unit), unit);
      CHECK(greedy <= unidirectional_time(reduce_chain(p, count, unit), unit));
      CHECK(greedy <= unidirectional_time(reduce_binomial(p, count), unit));
      CHECK(greedy <= unidirectional_time(reduce_binary_tree(p, count, unit), unit));
      CHECK(greedy <= unidirectional_time(reduce_kary_tree(p, count, 4, unit), unit));
      // Every non-root rank sends q segments and at most P/2 transfers fit in a step.
      CHECK(greedy * static_cast<std::size_t>(p / 2) >= q * static_cast<std::size_t>(p - 1));
    }
  }
}

TEST_CASE("greedy at P = 64, 16 segments: the figures docs/algorithms.md reports") {
  const std::size_t unit = 10, count = 16 * unit;
  CHECK(unidirectional_time(reduce_greedy(64, count, unit), unit) == 45);
  CHECK(unidirectional_time(reduce_chain(64, count, unit), unit) == 93);
  CHECK(unidirectional_time(reduce_binomial(64, count), unit) == 96);
  CHECK(unidirectional_time(reduce_binary_tree(64, count, unit), unit) == 56);
  CHECK(schedule_stats(reduce_greedy(64, count, unit)).rounds == 16);
}
