// RankPlan: the projection of a Schedule onto one rank, in the form the
// runtime's executor consumes. Local dependencies become successor lists and
// wait counters; cross-rank dependencies become flags this rank waits for
// (in its own window) and notifications it raises in peers' windows.
#pragma once

#include <earlybird/collectives/catalogue.hpp>
#include <earlybird/collectives/schedule.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace earlybird::coll {

struct PlanStep {
  StepKind kind = StepKind::copy;
  int peer = -1;  // virtual rank on the far side of a transfer, -1 for local steps
  Buffer src_buffer = Buffer::output;
  Buffer dst_buffer = Buffer::output;
  Buffer left_buffer = Buffer::output;  // reduce: dst = left op src
  Range src;
  Range dst;
  Range left;
  std::uint32_t waits = 0;  // local predecessors + flags to see before it may run
  std::uint32_t succ_begin = 0, succ_end = 0;  // into RankPlan::successors
  std::uint32_t note_begin = 0, note_end = 0;  // into RankPlan::notes
  bool operator==(const PlanStep&) const = default;
};

struct RankPlan {
  std::string algorithm;
  int rank = 0;   // virtual rank
  int ranks = 0;
  std::size_t count = 0;
  Shape shape;
  std::size_t scratch_elems = 0;
  // Schedule-wide maxima: every rank must cut a large collective into the same
  // batches, so batching looks at the most demanding rank, not at itself.
  std::size_t max_scratch_elems = 0;
  std::uint32_t max_flags = 0;
  std::vector<PlanStep> steps;              // in program order
  std::vector<std::uint32_t> successors;    // local step indices
  std::vector<Notification> notes;          // raised after a step completes
  std::uint32_t flags = 0;                  // flags this rank receives
  std::vector<std::uint32_t> release_begin; // flag f releases release[release_begin[f] .. release_begin[f+1])
  std::vector<std::uint32_t> release;
  std::vector<int> flag_source;             // virtual rank that raises flag f
  bool operator==(const RankPlan&) const = default;
};

RankPlan project(const Schedule& schedule, int rank);

// `rank`'s plan of `algorithm`. Where the entry has bounds, only the steps
// touching the memory of the rank's neighbourhood are generated: the rank,
// the peers of its steps, the ranks it notifies and their peers (whose steps
// number the flags it raises), grown until it no longer changes. The steps,
// flags and notifications then equal project(whole schedule, rank); the
// schedule-wide maxima are the entry's bounds (>= the exact maxima). Where
// the entry also has `plan`, that writes the rank's plan directly instead,
// at every P (same result, O(the rank's steps)).
// Otherwise, and for P <= whole_up_to (where the whole schedule costs no
// more than the two or three focused builds), the whole schedule is built and
// projected; the maxima are still the bounds where the entry has them, so
// every rank batches alike whichever way it planned.
inline constexpr int kWholePlanRanks = 16;
RankPlan plan_for_rank(const Algorithm& algorithm, int ranks, std::size_t count, AlgorithmParams params,
                       std::size_t elem_bytes, int rank, int whole_up_to = kWholePlanRanks);

}  // namespace earlybird::coll
