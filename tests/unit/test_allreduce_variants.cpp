// Checks the allreduce variants beyond ring and recursive doubling (linear, chain, recursive doubling halves, Rabenseifner, reduce + bcast compositions): rank order (ordered mode) where claimed, honest needs_commutative flags, pipelined segments, P up to 1024.
#include <earlybird/collectives/allreduce.hpp>
#include <earlybird/collectives/partition.hpp>
#include <earlybird/collectives/verify.hpp>

#include "unit_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

using namespace earlybird::coll;
using earlybird::coll::test::swept_ranks;

namespace {

constexpr std::size_t kElemBytes = 4;

VerifyReport verify_ordered(const Schedule& s, std::uint64_t seed) {
  VerifyOptions options;
  options.seed = seed;
  options.ordered = true;
  return verify(s, Collective::allreduce, options);
}

void check_ordered(const Schedule& s, std::uint64_t seeds) {
  for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
    const VerifyReport report = verify_ordered(s, seed);
    CHECK_MESSAGE(report.ok, report.error);
  }
}

void check_verified(const Schedule& s) {
  const VerifyReport report = verify(s, Collective::allreduce, {});
  CHECK_MESSAGE(report.ok, report.error);
  CHECK(report.steps_run == s.steps().size());
}

// The blockwise counts and 2, 2P+3.
std::vector<std::size_t> ordered_counts(int p) { return test::counts_for(p, {2, 2 * static_cast<std::size_t>(p) + 3}); }

// Whether the schedule keeps rank order for every P in 1..16 at a count that
// leaves no chunk empty and splits unevenly, in several segments (greedy
// pipelining reorders only from the second segment on).
bool keeps_rank_order(const Algorithm& algorithm) {
  AlgorithmParams params;
  params.segment_elems = 5;
  for (int p = 1; p <= 16; ++p)
    if (!verify_ordered(algorithm.make(p, 37, params, kElemBytes), 1).ok) return false;
  return true;
}

// Arrival-ordered algorithms bind virtual rank id to the id-th rank to
// arrive: keeping virtual-rank order is not keeping rank order.
bool combines_in_rank_order(const Algorithm& algorithm) {
  return algorithm.arrival == ArrivalOrder::none && keeps_rank_order(algorithm);
}

}  // namespace

TEST_CASE("needs_commutative is honest: false exactly when every reduce keeps rank order") {
  for (const Algorithm& algorithm : allreduce_algorithms()) {
    CAPTURE(algorithm.name);
    CHECK(algorithm.needs_commutative == !combines_in_rank_order(algorithm));
  }
}

TEST_CASE("algorithms for non-commutative operators keep rank order, P = 1..64, several counts, 2 seeds") {
  for (const Algorithm& algorithm : allreduce_algorithms()) {
    if (algorithm.needs_commutative) continue;
    for (int p : swept_ranks()) {
      for (std::size_t count : ordered_counts(p)) {
        CAPTURE(algorithm.name);
        CAPTURE(p);
        CAPTURE(count);
        check_ordered(algorithm.make(p, count, {}, kElemBytes), 2);
      }
    }
  }
}

TEST_CASE("pipelined compositions and chain with several segments, P = 1..32") {
  for (const char* name : {"chain", "binary_tree", "chain_reduce_bcast", "greedy_reduce_bcast"}) {
    const Algorithm* algorithm = find_allreduce(name);
    REQUIRE(algorithm != nullptr);
    for (int p = 1; p <= 32; ++p) {
      for (std::size_t segment : {1u, 3u, 64u}) {
        CAPTURE(std::string(name));
        CAPTURE(p);
        CAPTURE(segment);
        AlgorithmParams params;
        params.segment_elems = segment;
        const Schedule s = algorithm->make(p, 100, params, kElemBytes);
        if (algorithm->needs_commutative)
          check_verified(s);
        else
          check_ordered(s, 2);
      }
    }
  }
}

TEST_CASE("reduce_bcast composes every reduce phase with every bcast phase, P = 1..12") {
  const ReducePhase reduces[] = {ReducePhase::binomial, ReducePhase::chain, ReducePhase::binary_tree,
                                 ReducePhase::kary_tree, ReducePhase::greedy};
  const BcastPhase bcasts[] = {BcastPhase::binomial, BcastPhase::chain, BcastPhase::binary_tree,
                               BcastPhase::scatter_allgather};
  AlgorithmParams params;
  params.segment_elems = 5;
  params.fanout = 3;
  for (ReducePhase reduce : reduces) {
    for (BcastPhase bcast : bcasts) {
      for (int p = 1; p <= 12; ++p) {
        CAPTURE(static_cast<int>(reduce));
        CAPTURE(static_cast<int>(bcast));
        CAPTURE(p);
        check_verified(allreduce_reduce_bcast(p, 37, {reduce, bcast}, params));
      }
    }
  }
}

TEST_CASE("no allreduce reuses scratch: every cross-rank dependency is data arriving, never an acknowledgement") {
  AlgorithmParams several_segments;
  several_segments.segment_elems = 5;
  for (const Algorithm& algorithm : allreduce_algorithms()) {
    for (int p = 1; p <= 24; ++p) {
      CAPTURE(algorithm.name);
      CAPTURE(p);
      CHECK(test::first_acknowledgement(algorithm.make(p, 37, several_segments, kElemBytes)) == "");
    }
  }
}

TEST_CASE("chain pipelines: segment 0 returns before the last segment has been reduced") {
  const std::size_t p = 4, count = 8, segment = 2;
  const Schedule s = allreduce_chain(static_cast<int>(p), count, segment);
  // The first put of rank P-1 starts the return of segment 0; walk its ancestors.
  StepId first_return = 0;
  while (s.steps()[first_return].kind != StepKind::put || s.steps()[first_return].owner != static_cast<int>(p) - 1)
    ++first_return;
  CHECK(s.steps()[first_return].src.range == Range{0, segment});
  std::vector<bool> ancestor(s.steps().size(), false);
  ancestor[first_return] = true;
  for (StepId id = first_return + 1; id-- > 0;)
    if (ancestor[id])
      for (StepId d : s.deps(id)) ancestor[d] = true;
  for (StepId id = 0; id < s.steps().size(); ++id)
    if (ancestor[id]) CHECK(s.steps()[id].src.range.begin < segment);  // only segment 0's steps
}

TEST_CASE("rabenseifner: after the reduce-scatter core rank r holds chunk bitreverse(r)") {
  // P = 8, count 8: one element per chunk; the last reduce of each rank
  // writes the chunk it keeps.
  const Schedule s = allreduce_rabenseifner(8, 8);
  std::vector<std::size_t> last_reduced(8, 99);
  for (const Step& step : s.steps())
    if (step.kind == StepKind::reduce) last_reduced[static_cast<std::size_t>(step.owner)] = step.dst.range.begin;
  const std::vector<std::size_t> bit_reversed{0, 4, 2, 6, 1, 5, 3, 7};
  CHECK(last_reduced == bit_reversed);
}

TEST_CASE("large P: the variants for P in {1000, 1024}, counts {0, 1, P+1}") {
  for (const std::string name : {"linear", "chain", "recursive_doubling_halves", "rabenseifner", "binomial",
                                 "binary_tree", "chain_reduce_bcast", "greedy_reduce_bcast"}) {
    const Algorithm* algorithm = find_allreduce(name);
    REQUIRE(algorithm != nullptr);
    for (int p : {1000, 1024}) {
      for (std::size_t count : {std::size_t{0}, std::size_t{1}, static_cast<std::size_t>(p) + 1}) {
        CAPTURE(name);
        CAPTURE(p);
        CAPTURE(count);
        check_verified(algorithm->make(p, count, {}, kElemBytes));
      }
    }
  }
}
