// Per-rank plans (plan_for_rank): a rank that builds only its neighbourhood
// gets exactly the plan projected from the whole schedule, and the entry's
// bounds cover the schedule-wide maxima every rank's batching uses.
#include <earlybird/collectives/allreduce.hpp>
#include <earlybird/collectives/builder.hpp>
#include <earlybird/collectives/plan.hpp>

#include <doctest/doctest.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

using namespace earlybird::coll;

namespace {

// Every collective's entries with bounds.
std::vector<const Algorithm*> entries_with_bounds() {
  std::vector<const Algorithm*> out;
  for (Collective c : kCollectives)
    for (const Algorithm& a : algorithms(c))
      if (a.bounds) out.push_back(&a);
  return out;
}

// Whether the entry, without a node layout, builds a ring over every rank
// (4P(P - 1) steps for the allreduce ring, P(P - 1) transfers for the
// blockwise ones and bcast's scatter-allgather): the large-P cases keep its
// whole schedule small.
bool ring_over_every_rank(const Algorithm& a) {
  const std::string_view name = a.name;
  return name == "ring" || name == "segmented_ring" || name == "hierarchical" || name == "scatter_allgather";
}

// Checks the plans of `ranks_to_check` against the whole schedule, and the
// entry's bounds against its maxima.
void check_rank_plans(const Algorithm& a, int p, std::size_t count, const AlgorithmParams& params,
                      const std::vector<int>& ranks_to_check) {
  constexpr std::size_t kElemBytes = 4;
  CAPTURE(a.name);
  CAPTURE(p);
  CAPTURE(count);
  CAPTURE(params.segment_elems);
  const Schedule whole = a.make(p, count, params, kElemBytes);
  const PlanBounds bounds = a.bounds(p, count, params, kElemBytes);
  CHECK(bounds.scratch_elems >= whole.max_scratch_elems());
  CHECK(bounds.flags >= whole.max_flag_count());
  for (int r : ranks_to_check) {
    CAPTURE(r);
    RankPlan expected = project(whole, r);
    expected.max_scratch_elems = bounds.scratch_elems;
    expected.max_flags = bounds.flags;
    // whole_up_to = 0: the neighbourhood's builds (or the entry's direct
    // plan) at every P.
    CHECK(plan_for_rank(a, p, count, params, kElemBytes, r, 0) == expected);
    CHECK(plan_for_rank(a, p, count, params, kElemBytes, r) == expected);
  }
}

std::vector<int> every_rank(int p) {
  std::vector<int> ranks;
  for (int r = 0; r < p; ++r) ranks.push_back(r);
  return ranks;
}

}  // namespace

TEST_CASE("the entries that plan per rank: allreduce's ring family, recursive doubling, Rabenseifner, SUARA, "
          "hierarchical; bcast's scatter-allgather; allgather's ring, recursive doubling, Bruck and hierarchical; "
          "reduce-scatter's ring, recursive halving and hierarchical") {
  std::vector<std::string> names;
  std::vector<std::string> written;  // directly, without the Builder
  for (Collective c : kCollectives)
    for (const Algorithm& a : algorithms(c)) {
      const std::string name = std::string(to_string(c)) + ":" + std::string(a.name);
      if (a.bounds) names.push_back(name);
      if (a.plan) written.push_back(name);
    }
  CHECK(names == std::vector<std::string>{"allreduce:ring", "allreduce:segmented_ring", "allreduce:recursive_doubling",
                                          "allreduce:rabenseifner", "allreduce:suara", "allreduce:hierarchical",
                                          "bcast:scatter_allgather", "allgather:ring", "allgather:recursive_doubling",
                                          "allgather:bruck", "allgather:hierarchical", "reduce_scatter:ring",
                                          "reduce_scatter:recursive_halving", "reduce_scatter:hierarchical"});
  CHECK(written == std::vector<std::string>{"allreduce:ring", "allreduce:segmented_ring"});
}

TEST_CASE("a directly written plan names its algorithm and leaves the maxima to the bounds") {
  const RankPlan plan = allreduce_ring_plan(5, 17, 3);
  const RankPlan expected = project(allreduce_ring(5, 17), 3);
  CHECK(plan.algorithm == "allreduce_ring");
  CHECK(plan.max_scratch_elems == 0);
  CHECK(plan.max_flags == 0);
  CHECK(plan.steps == expected.steps);
  CHECK(plan.notes == expected.notes);
  CHECK(plan.scratch_elems == expected.scratch_elems);
  CHECK(allreduce_segmented_ring_plan(5, 17, 2, 0).algorithm == "allreduce_segmented_ring");
}

TEST_CASE("per-rank plans equal the projection of the whole schedule, P = 1..24, every rank") {
  for (const Algorithm* a : entries_with_bounds())
    for (int p = 1; p <= 24; ++p) {
      const auto n = static_cast<std::size_t>(p);
      for (std::size_t count : {std::size_t{0}, std::size_t{1}, n - 1, n, 7 * n + 3, std::size_t{1000}})
        for (std::size_t segment : {std::size_t{0}, std::size_t{3}}) {
          AlgorithmParams params;
          params.segment_elems = segment;
          check_rank_plans(*a, p, count, params, every_rank(p));
        }
    }
}

TEST_CASE("large P: per-rank plans equal the projection, P in {100, 257, 1024}, sampled ranks") {
  for (const Algorithm* a : entries_with_bounds())
    for (int p : {100, 257, 1024}) {
      // The whole allreduce ring at P = 1024 has 4P(P - 1) steps for count
      // >= P: keep the count below P there (empty chunks drop their steps).
      // Without nodes the hierarchical entries are rings. A blockwise ring
      // moves every block whatever the count: P = 1024 is left to the
      // benchmark (eb-bench plans).
      const std::string_view name = a->name;
      const bool ring = ring_over_every_rank(*a);
      if (ring && p > 257 && find_algorithm(Collective::allreduce, name) != a) continue;
      const auto n = static_cast<std::size_t>(p);
      // SUARA's grid choice simulates rings of up to 1024 ranks: whole ones
      // (4n(n - 1) steps) unless n divides the count (suara.cpp).
      const std::size_t count = ring && p > 257 ? n / 3 : name == "suara" && p == 1024 ? 4 * n : 3 * n + 1;
      check_rank_plans(*a, p, count, {}, {0, 1, 2, p / 2 - 1, p / 2, p - 2, p - 1, (p * 7) / 13});
    }
}

// Over nodes (AlgorithmParams::node_ranks): the hierarchical entries' node
// and network phases (the allreduce's network step in segments), and with
// one rank per node the network phase alone.
TEST_CASE("hierarchical over nodes: per-rank plans equal the projection, bounds cover the maxima") {
  for (Collective c : {Collective::allreduce, Collective::allgather, Collective::reduce_scatter}) {
    const Algorithm& hierarchical = *find_algorithm(c, "hierarchical");
    CAPTURE(to_string(c));
    for (auto [p, n] : {std::pair{4, 2}, {6, 2}, {6, 3}, {8, 4}, {9, 3}, {12, 4}, {8, 1}, {12, 12}})
      for (std::size_t count : {std::size_t{1}, static_cast<std::size_t>(p) - 1, std::size_t{100}, std::size_t{1001}})
        for (std::size_t segment : {std::size_t{0}, std::size_t{3}, std::size_t{40}}) {
          CAPTURE(n);
          AlgorithmParams params;
          params.node_ranks = n;
          params.segment_elems = segment;
          check_rank_plans(hierarchical, p, count, params, every_rank(p));
        }
    // Many nodes: 64 nodes of 4 and 32 of 8, sampled ranks.
    for (auto [p, n] : {std::pair{256, 4}, {256, 8}}) {
      CAPTURE(n);
      AlgorithmParams params;
      params.node_ranks = n;
      params.segment_elems = 50;
      check_rank_plans(hierarchical, p, 3 * static_cast<std::size_t>(p) + 1, params, {0, 1, n - 1, n, p / 2, p - 1});
    }
  }
}

TEST_CASE("where P divides the count, the scratch bound is the exact maximum (batches as before)") {
  for (const Algorithm* a : entries_with_bounds())
    for (int p : {2, 3, 4, 6, 8, 16, 24}) {
      CAPTURE(a->name);
      CAPTURE(p);
      const std::size_t count = 48 * static_cast<std::size_t>(p);
      const Schedule whole = a->make(p, count, {}, 4);
      CHECK(a->bounds(p, count, {}, 4).scratch_elems == whole.max_scratch_elems());
    }
}

TEST_CASE("entries without bounds are projected from the whole schedule") {
  const Algorithm* linear = find_algorithm(Collective::allreduce, "linear");
  REQUIRE(linear != nullptr);
  REQUIRE(!linear->bounds);
  const Schedule whole = linear->make(5, 17, {}, 8);
  for (int r = 0; r < 5; ++r) CHECK(plan_for_rank(*linear, 5, 17, {}, 8, r) == project(whole, r));
}

TEST_CASE("a focused builder keeps exactly the steps touching its ranks' memory") {
  const Schedule whole = allreduce_rabenseifner(6, 60);
  const Schedule part = allreduce_rabenseifner(6, 60, {2});
  std::size_t touching = 0;
  for (const Step& s : whole.steps())
    if (s.src.rank == 2 || s.dst.rank == 2) ++touching;
  CHECK(part.steps().size() == touching);
  CHECK(part.steps().size() < whole.steps().size());
  CHECK(part.scratch_elems(2) == whole.scratch_elems(2));
}

TEST_CASE("keep_only names ranks within the schedule, before the first step") {
  Builder b("allreduce_ring", 4, 8);
  CHECK_THROWS_WITH_AS(b.keep_only({4}), "allreduce_ring: keep_only names rank 4", std::invalid_argument);
  CHECK_THROWS_AS(b.keep_only({-1}), std::invalid_argument);
  b.keep_only({1, 3});
  CHECK(b.kept_ranks() == std::vector<int>{1, 3});
  // A refused call leaves the kept set as it was.
  CHECK_THROWS_AS(b.keep_only({0, 9}), std::invalid_argument);
  CHECK(b.kept_ranks() == std::vector<int>{1, 3});
  b.keep_only({});
  CHECK(b.kept_ranks() == std::vector<int>{0, 1, 2, 3});
  b.copy({0, Buffer::output, {0, 8}}, {0, Buffer::input, {0, 8}});
  CHECK_THROWS_WITH_AS(b.keep_only({0}), "allreduce_ring: keep_only after steps were added", std::logic_error);
}
