// Verifies every reduce algorithm symbolically (rank order where claimed) for P = 1..64 and large P, many counts, segments and seeds; greedy with one segment is the binomial reduce.
#include <earlybird/collectives/partition.hpp>
#include <earlybird/collectives/reduce.hpp>
#include <earlybird/collectives/verify.hpp>

#include "unit_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <functional>
#include <string>
#include <vector>

using namespace earlybird::coll;
using namespace earlybird::coll::test;

namespace {

constexpr std::size_t kElemBytes = 4;

using Generator = std::function<Schedule(int ranks, std::size_t count, std::size_t segment_elems)>;

struct Named {
  std::string name;
  bool ordered;  // keeps rank order: must pass ordered mode
  Generator make;
};

std::vector<Named> segmented_generators() {
  return {
      {"chain", true, reduce_chain},
      {"binary_tree", true, reduce_binary_tree},
      {"kary_tree(3)", true, [](int p, std::size_t n, std::size_t s) { return reduce_kary_tree(p, n, 3, s); }},
      {"kary_tree(4)", true, [](int p, std::size_t n, std::size_t s) { return reduce_kary_tree(p, n, 4, s); }},
      {"greedy", false, reduce_greedy},
  };
}

void check_verified(const Schedule& s, bool ordered, std::uint64_t seeds) {
  for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
    VerifyOptions options;
    options.seed = seed;
    options.ordered = ordered;
    const VerifyReport report = verify(s, Collective::reduce, options);
    CHECK_MESSAGE(report.ok, report.error);
    CHECK(report.steps_run == s.steps().size());
  }
}

// About `parts` segments of the vector (at least one element each).
std::size_t segment_for(std::size_t count, std::size_t parts) { return std::max<std::size_t>(1, count / parts); }

// A step as text plus its dependencies as text: equal lists mean equal
// schedules up to the order in which their steps were recorded.
std::vector<std::string> canonical(const Schedule& s) {
  std::vector<std::string> lines;
  for (StepId id = 0; id < s.steps().size(); ++id) {
    std::vector<std::string> deps;
    for (StepId d : s.deps(id)) deps.push_back(to_string(s.steps()[d]));
    std::sort(deps.begin(), deps.end());
    std::string line = to_string(s.steps()[id]) + " after:";
    for (const std::string& d : deps) line += " [" + d + "]";
    lines.push_back(line);
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

}  // namespace

TEST_CASE("catalogue: the eight reduce algorithms with their properties") {
  const auto list = reduce_algorithms();
  REQUIRE(list.size() == 8);
  for (const char* name :
       {"binomial", "chain", "binary_tree", "kary_tree", "hierarchical", "greedy", "inline_flags", "peer_reads"}) {
    const Algorithm* a = find_reduce(name);
    REQUIRE_MESSAGE(a != nullptr, name);
    CHECK(a->needs_commutative == (std::string(name) == "greedy"));
    const bool reads_lines_or_peers = std::string(name) == "inline_flags" || std::string(name) == "peer_reads";
    CHECK(a->pipelined == (std::string(name) != "binomial" && !reads_lines_or_peers));
    CHECK((a->executor == Executor::inline_lines) == (std::string(name) == "inline_flags"));
    CHECK((a->executor == Executor::peer_reads) == (std::string(name) == "peer_reads"));
    CHECK(a->default_segment_bytes == (a->pipelined ? 512u * 1024 : 0u));
  }
  CHECK(find_reduce("ring") == nullptr);
  // The catalogue's defaults: 512 KiB segments, fan-out 4.
  const Schedule kary = find_reduce("kary_tree")->make(6, 3 * 131072, {}, kElemBytes);
  CHECK(kary.steps().size() == reduce_kary_tree(6, 3 * 131072, 4, 131072).steps().size());
  CHECK(schedule_stats(kary).per_rank[1].puts == 3);
}

TEST_CASE("every catalogue algorithm, P = 1..64, counts {0, 1, P-1, P, P+1, 1000, 10007}, 3 seeds") {
  for (const Algorithm& algorithm : reduce_algorithms()) {
    for (int p : test::swept_ranks()) {
      for (std::size_t count : test::vector_counts(p)) {
        CAPTURE(algorithm.name);
        CAPTURE(p);
        CAPTURE(count);
        check_verified(algorithm.make(p, count, {}, kElemBytes), !algorithm.needs_commutative, 3);
      }
    }
  }
}

TEST_CASE("pipelined algorithms with several segments, P = 1..64") {
  for (const Named& g : segmented_generators()) {
    for (int p : test::swept_ranks()) {
      for (std::size_t count : {static_cast<std::size_t>(3 * p + 1), std::size_t{1000}, std::size_t{10007}}) {
        for (std::size_t parts : {2u, 7u, 30u}) {
          const std::size_t segment = segment_for(count, parts);
          CAPTURE(g.name);
          CAPTURE(p);
          CAPTURE(count);
          CAPTURE(segment);
          check_verified(g.make(p, count, segment), g.ordered, 2);
        }
      }
    }
  }
}

TEST_CASE("k-ary trees of every fan-out 1..9 keep rank order") {
  for (int fanout = 1; fanout <= 9; ++fanout) {
    for (int p : {1, 2, 3, 5, 8, 13, 21, 40}) {
      CAPTURE(fanout);
      CAPTURE(p);
      check_verified(reduce_kary_tree(p, 50, fanout, 0), true, 2);
      check_verified(reduce_kary_tree(p, 50, fanout, 16), true, 2);
    }
  }
  CHECK_THROWS_AS(reduce_kary_tree(4, 10, 0, 0), std::invalid_argument);
}

TEST_CASE("large P: P in {100, 127, 128, 1000}, one and several segments") {
  for (int p : {100, 127, 128, 1000}) {
    const auto n = static_cast<std::size_t>(p);
    for (const Algorithm& algorithm : reduce_algorithms()) {
      for (std::size_t count : {std::size_t{0}, std::size_t{1}, n - 1, n + 1, std::size_t{10007}}) {
        CAPTURE(algorithm.name);
        CAPTURE(p);
        CAPTURE(count);
        check_verified(algorithm.make(p, count, {}, kElemBytes), !algorithm.needs_commutative, 2);
      }
    }
    for (const Named& g : segmented_generators()) {
      for (std::size_t count : {2 * n + 3, std::size_t{10007}}) {
        CAPTURE(g.name);
        CAPTURE(p);
        CAPTURE(count);
        check_verified(g.make(p, count, segment_for(count, 5)), g.ordered, 2);
      }
    }
  }
}

TEST_CASE("greedy with one segment is the binomial reduce: same steps, slots and dependencies") {
  for (int p : test::swept_ranks()) {
    for (std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{37}}) {
      CAPTURE(p);
      CAPTURE(count);
      const Schedule greedy = reduce_greedy(p, count, 0);
      const Schedule binomial = reduce_binomial(p, count);
      CHECK(greedy.steps().size() == binomial.steps().size());
      CHECK(canonical(greedy) == canonical(binomial));
      CHECK(schedule_stats(greedy).rounds == schedule_stats(binomial).rounds);
      for (int r = 0; r < p; ++r) CHECK(greedy.scratch_elems(r) == binomial.scratch_elems(r));
      // A segment as long as the vector is one segment too.
      if (count > 0) CHECK(canonical(reduce_greedy(p, count, count)) == canonical(binomial));
    }
  }
}

TEST_CASE("greedy is honest about commutativity: rank order holds for one segment only") {
  check_verified(reduce_greedy(4, 8, 0), true, 2);
  // P = 4, two segments: rank 1 folds in rank 3's second segment before rank 2's.
  const VerifyReport report = verify(reduce_greedy(4, 8, 4), Collective::reduce, {1, 50000, true});
  CHECK_FALSE(report.ok);
  CHECK_MESSAGE(report.error.find("out of rank order") != std::string::npos, report.error);
}

// Over nodes of n consecutive ranks (tree_reduce.cpp, reduce_hierarchical):
// rank order kept, N - 1 crossings per segment, the binomial tree at powers
// of two.
TEST_CASE("hierarchical: rank order over every node layout; N - 1 crossings per segment; binomial at powers of two") {
  const Algorithm& hierarchical = *find_algorithm(Collective::reduce, "hierarchical");
  CHECK_FALSE(hierarchical.needs_commutative);
  for_each_node_layout(hierarchical, [](const Schedule& s, int p, int n, std::size_t segments) {
    check_verified(s, true, 1);
    if (segments == 0) return;
    CHECK(static_cast<std::size_t>(node_crossings(s, n)) == static_cast<std::size_t>(p / n - 1) * segments);
    if (segments == 1 && powers_of_two(p, n)) CHECK(canonical(s) == canonical(reduce_binomial(p, s.count())));
  });
  CHECK(node_crossings(reduce_hierarchical(6, 10, 3, 0), 3) == 1);
  CHECK(node_crossings(reduce_binomial(6, 10), 3) == 2);
}
