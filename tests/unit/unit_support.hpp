// Shared by the unit tests: printing of IR types for doctest, and small
// hand-written schedules used by several test files.
#pragma once

#include <earlybird/collectives/builder.hpp>
#include <earlybird/collectives/catalogue.hpp>
#include <earlybird/collectives/schedule.hpp>
#include <earlybird/collectives/verify.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <initializer_list>
#include <string>
#include <vector>

namespace doctest {
template <>
struct StringMaker<earlybird::coll::Range> {
  static String convert(const earlybird::coll::Range& r) {
    return ("[" + std::to_string(r.begin) + "," + std::to_string(r.end()) + ")").c_str();
  }
};
}  // namespace doctest

namespace earlybird::coll::test {

// The P sweep of the schedule tests: first..64. Under a sanitizer (6-10x
// slower; they were most of the sanitized tier's time) first..24 and 32, 33:
// every branch of the generators (P a power of two or not, one or several
// ranks beyond the power of two, odd and even) is taken there too; the
// release tier runs the whole sweep.
inline std::vector<int> swept_ranks(int first = 1) {
#ifdef EARLYBIRD_SANITIZED_TIER
  constexpr int kLast = 24;
  const std::initializer_list<int> beyond = {32, 33};
#else
  constexpr int kLast = 64;
  const std::initializer_list<int> beyond = {};
#endif
  std::vector<int> ranks;
  for (int p = first; p <= kLast; ++p) ranks.push_back(p);
  ranks.insert(ranks.end(), beyond.begin(), beyond.end());
  return ranks;
}

// Parameters with only the segment length set.
inline AlgorithmParams segments_of(std::size_t elems) {
  AlgorithmParams params;
  params.segment_elems = elems;
  return params;
}

inline Slot in(int rank, std::size_t begin, std::size_t count) {
  return {rank, Buffer::input, {begin, count}};
}
inline Slot out(int rank, std::size_t begin, std::size_t count) {
  return {rank, Buffer::output, {begin, count}};
}
inline Slot scratch(int rank, std::size_t begin, std::size_t count) {
  return {rank, Buffer::scratch, {begin, count}};
}

// Allreduce of P = 2, count = 2 in which rank 1 receives both of rank 0's
// elements through ONE scratch slot, so the second put must wait until rank 1
// has reduced the first (a cross-rank write-after-read edge).
struct ScratchReuse {
  Schedule schedule;
  StepId first_put, first_reduce, second_put, second_reduce, return_put, return_copy;
};

// `b`: a Builder of P = 2, count = 2 (the tests pass one without
// write-after-read edges to see the race).
inline ScratchReuse scratch_reuse_schedule(Builder b = Builder("scratch_reuse", 2, 2)) {
  b.copy_input_to_output();
  ScratchReuse s;
  s.first_put = b.put(out(0, 0, 1), scratch(1, 0, 1));
  s.first_reduce = b.reduce(out(1, 0, 1), scratch(1, 0, 1));
  s.second_put = b.put(out(0, 1, 1), scratch(1, 0, 1));
  s.second_reduce = b.reduce(out(1, 1, 1), scratch(1, 0, 1));
  s.return_put = b.put(out(1, 0, 2), scratch(0, 0, 2));
  s.return_copy = b.copy(out(0, 0, 2), scratch(0, 0, 2));
  s.schedule = std::move(b).finish();
  return s;
}

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Verifies `s` as `collective` under seeds 1..seeds; every run must pass and
// run every step.
inline void check_verified_as(const Schedule& s, Collective collective, std::uint64_t seeds) {
  for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
    const VerifyReport report = verify(s, collective, {seed});
    CHECK_MESSAGE(report.ok, report.error);
    CHECK(report.steps_run == s.steps().size());
  }
}

// Every cross-rank dependency carries data (a put into scratch that the
// dependent step reads): no acknowledgement (write-after-read) flags.
// Returns the first dependency that is not, or an empty string.
inline std::string first_acknowledgement(const Schedule& s) {
  const auto steps = s.steps();
  for (StepId id = 0; id < steps.size(); ++id)
    for (StepId d : s.deps(id)) {
      const Step& from = steps[d];
      const Step& to = steps[id];
      if (from.owner == to.owner) continue;
      auto reads_what_it_wrote = [&](const Slot& operand) {
        return operand.buffer == Buffer::scratch && from.dst.rank == operand.rank &&
               from.dst.range.overlaps(operand.range);
      };
      // A reduce may read the scratch on either side (dst = left op src).
      const bool reads_it =
          reads_what_it_wrote(to.src) || (to.kind == StepKind::reduce && reads_what_it_wrote(to.left));
      const bool carries_data = from.kind == StepKind::put && reads_it;
      if (!carries_data) return to_string(to) + " waits on " + to_string(from);
    }
  return {};
}

// The counts a sweep over P tries: {0, 1, P-1, P, P+1, 1000} and `extra`,
// sorted, without repeats.
inline std::vector<std::size_t> counts_for(int p, std::initializer_list<std::size_t> extra = {}) {
  const auto n = static_cast<std::size_t>(p);
  std::vector<std::size_t> counts{0, 1, n - 1, n, n + 1, 1000};
  counts.insert(counts.end(), extra);
  std::sort(counts.begin(), counts.end());
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  return counts;
}

// Block counts the blockwise collectives sweep: {0, 1, P-1, P, P+1, 1000}.
inline std::vector<std::size_t> block_counts(int p) { return counts_for(p); }

// Vector counts the allreduce, reduce and bcast sweeps try: the blockwise
// ones and a large prime, 10007.
inline std::vector<std::size_t> vector_counts(int p) { return counts_for(p, {10007}); }

// Steps of ranks other than `late` that depend, directly or not, on a step of
// `late`: the work left to the others once it arrives (arrival-ordered
// schedules, where `late` is the last arrival position).
struct LeftAfter {
  std::size_t reduces = 0;
  std::size_t transfers = 0;
};

inline LeftAfter left_after(const Schedule& s, int late) {
  const auto steps = s.steps();
  std::vector<bool> waits(steps.size(), false);
  LeftAfter left;
  for (StepId id = 0; id < steps.size(); ++id) {
    waits[id] = steps[id].owner == late;
    for (StepId d : s.deps(id)) waits[id] = waits[id] || waits[d];
    if (!waits[id] || steps[id].owner == late) continue;
    if (steps[id].kind == StepKind::reduce) ++left.reduces;
    if (steps[id].is_transfer()) ++left.transfers;
  }
  return left;
}

// How many steps of `kind` `rank` owns.
inline std::size_t steps_of(const Schedule& s, int rank, StepKind kind) {
  return static_cast<std::size_t>(std::count_if(s.steps().begin(), s.steps().end(), [&](const Step& step) {
    return step.owner == rank && step.kind == kind;
  }));
}

// The sweep every blockwise catalogue passes (allgather, reduce_scatter):
// swept_ranks() x block_counts x 3 seeds with the right shape and no
// acknowledgement flags, and blocks of 10007 for a few P.
inline void check_blockwise_catalogue(Collective collective) {
  constexpr std::size_t kElem = 4;
  for (const Algorithm& algorithm : algorithms(collective)) {
    CAPTURE(algorithm.name);
    CHECK_FALSE(algorithm.pipelined);
    for (int p : swept_ranks())
      for (std::size_t count : block_counts(p)) {
        CAPTURE(p);
        CAPTURE(count);
        const Schedule s = algorithm.make(p, count, {}, kElem);
        CHECK(s.shape() == shape_of(collective, p, count));
        check_verified_as(s, collective, 3);
        CHECK(first_acknowledgement(s) == "");
      }
    for (int p : {2, 3, 5, 8, 13}) check_verified_as(algorithm.make(p, 10007, {}, kElem), collective, 2);
  }
}

// Its large-P part: P up to 1000, a few block sizes.
inline void check_blockwise_catalogue_large_p(Collective collective) {
  constexpr std::size_t kElem = 4;
  for (const Algorithm& algorithm : algorithms(collective)) {
    CAPTURE(algorithm.name);
    for (int p : {100, 127, 128, 1000})
      for (std::size_t count : {0u, 1u, 3u}) check_verified_as(algorithm.make(p, count, {}, kElem), collective, 1);
  }
}

// Transfers between nodes of n consecutive ranks.
inline int node_crossings(const Schedule& s, int n) {
  int crossed = 0;
  for (const Step& step : s.steps())
    if (step.is_transfer() && step.src.rank / n != step.dst.rank / n) ++crossed;
  return crossed;
}

// A hierarchical entry's cases: every node layout (n = 0, one node, and
// each divisor n of P) of P in {1, 2, 3, 4, 6, 8, 9, 12, 16, 24, 30, 64},
// counts {0, 1, P + 1, 1000}, one segment or segments of 7 elements.
// Calls check(schedule, p, n, segments) with `algorithm`'s schedule (4-byte
// elements); segments = 0 when the case has no nodes to cross (count 0,
// n <= 1 or n = P).
template <class Check>
void for_each_node_layout(const Algorithm& algorithm, Check check) {
  for (int p : {1, 2, 3, 4, 6, 8, 9, 12, 16, 24, 30, 64})
    for (int n = 0; n <= p; ++n) {
      if (n > 0 && p % n != 0) continue;
      for (std::size_t count : {std::size_t{0}, std::size_t{1}, static_cast<std::size_t>(p + 1), std::size_t{1000}})
        for (std::size_t segment : {std::size_t{0}, std::size_t{7}}) {
          CAPTURE(p);
          CAPTURE(n);
          CAPTURE(count);
          CAPTURE(segment);
          AlgorithmParams params;
          params.node_ranks = n;
          params.segment_elems = segment;
          const bool crosses = count > 0 && n > 1 && n < p;
          const std::size_t segments = !crosses ? 0 : segment == 0 ? 1 : (count + segment - 1) / segment;
          check(algorithm.make(p, count, params, 4), p, n, segments);
        }
    }
}

// The hierarchical allgather's and reduce-scatter's shared checks over every
// node layout (for_each_node_layout): verified, no acknowledgement flags,
// P - 1 blocks of scratch, and where nodes are crossed P (N - 1) crossings
// against the flat `ring`'s N (P - 1) and (n - 1) + (N - 1) rounds. Then
// per_rank(stats, p, count) checks each rank's figures (count > 0).
template <class PerRank>
void check_hierarchical_blockwise(Collective collective, Schedule (*ring)(int, std::size_t, const std::vector<int>&),
                                  PerRank per_rank) {
  for_each_node_layout(*find_algorithm(collective, "hierarchical"),
                       [&](const Schedule& s, int p, int n, std::size_t segments) {
                         check_verified_as(s, collective, 1);
                         CHECK(first_acknowledgement(s) == "");
                         const std::size_t count = s.count();
                         const auto others = static_cast<std::size_t>(p - 1);
                         if (count > 0) per_rank(schedule_stats(s), p, count);
                         CHECK(s.max_scratch_elems() == (count > 0 ? others * count : 0));
                         if (segments == 0) return;
                         const int nodes = p / n;
                         CHECK(node_crossings(s, n) == p * (nodes - 1));
                         CHECK(node_crossings(ring(p, count, {}), n) == nodes * (p - 1));
                         CHECK(schedule_stats(s).rounds == static_cast<std::size_t>((n - 1) + (nodes - 1)));
                       });
}

// Whether nodes of n ranks over P ranks are a power of two of powers of two.
inline bool powers_of_two(int p, int n) {
  return n > 0 && (n & (n - 1)) == 0 && ((p / n) & (p / n - 1)) == 0;
}

}  // namespace earlybird::coll::test
