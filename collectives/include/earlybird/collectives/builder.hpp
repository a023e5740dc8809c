// Builder: algorithms record steps in program order; the Builder derives every
// dependency from read/write hazards on slots.
//
// Hazards, per (rank, buffer, element):
//   read-after-write   a step that reads depends on the last writer;
//   write-after-write  a step that writes depends on the last writer;
//   write-after-read   a step that writes depends on every reader since the
//                      last write. Across ranks this is the acknowledgement RMA
//                      scratch reuse needs: a peer's put into my scratch waits
//                      until my reduce has consumed what was there.
// An edge between steps of different owners becomes a Notification (a flag in
// the target's window); the Builder numbers flags per receiving rank.
// Steps over empty ranges move nothing and are dropped.
#pragma once

#include <earlybird/collectives/schedule.hpp>

#include <map>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace earlybird::coll {

class Builder {
 public:
  static constexpr StepId kNoStep = ~StepId{0};

  // Input and output both of `count` elements (allreduce-like).
  Builder(std::string algorithm, int ranks, std::size_t count);
  // `count` is the collective's count as callers name it; `shape` the buffers.
  Builder(std::string algorithm, int ranks, std::size_t count, Shape shape);
  ~Builder();
  Builder(Builder&&) noexcept;
  Builder& operator=(Builder&&) noexcept;

  int ranks() const { return ranks_; }
  std::size_t count() const { return count_; }
  Shape shape() const { return shape_; }

  // Copies src (local to its rank) into dst, which must be a peer's scratch.
  StepId put(Slot src, Slot dst);
  // Pulls src (a peer's scratch) into dst (local to its rank).
  StepId get(Slot src, Slot dst);
  // dst = dst (op) src, both on one rank.
  StepId reduce(Slot dst, Slot src);
  // dst = left (op) right, all on one rank; left and right may each be dst
  // itself or disjoint from it, never partly overlapping it.
  StepId reduce(Slot dst, Slot left, Slot right);
  // dst = src, both on one rank.
  StepId copy(Slot dst, Slot src);

  // Every rank copies input into output (input and output of one shape): the
  // conventional first step of an allreduce-like schedule. Input is read here only, so in-place calls (input
  // aliasing output) are safe; the runtime skips the copy when they alias.
  void copy_input_to_output();
  // Copies input to output wherever no step has written output so far: the
  // closing step of algorithms that read input directly (P = 1 leaves the
  // whole output to it). Nothing is added where output is complete.
  void copy_unwritten_output();

  // Starts a fresh scratch region: from here on, scratch offsets count from
  // above everything used so far (per rank). Composed schedules (a reduce
  // phase, then a broadcast phase) call it between phases so the second phase
  // does not reuse the first one's slots, which would cost acknowledgement
  // flags the data flow already implies.
  void begin_scratch_region();

  // Per-rank plans (plan_for_rank in plan.hpp), called before the first
  // step: keep only the steps that touch the memory of at least one of
  // `ranks`, and let generators skip the rest (keeps()). The schedule then
  // describes those ranks' memory exactly and nothing else: it is an input
  // to project() for ranks whose whole neighbourhood is kept, not a schedule
  // to verify or run. Empty: keep every rank (the default).
  void keep_only(std::vector<int> ranks);
  bool keeps(int rank) const {
    return kept_.empty() || (rank >= 0 && rank < ranks_ && kept_[static_cast<std::size_t>(rank)] != 0);
  }
  // Whether any of `ranks` is kept: where none, a generator skips their steps.
  bool keeps_any(std::span<const int> ranks) const {
    for (int r : ranks)
      if (keeps(r)) return true;
    return false;
  }
  // The kept ranks in increasing order (every rank when nothing is dropped).
  std::vector<int> kept_ranks() const;

  Schedule finish() &&;

 private:
  // The verifier's tests build schedules that break the Builder's rules
  // through BuilderTestAccess (collectives/src/schedule/builder_test_access.hpp).
  friend struct BuilderTestAccess;
  // Makes `step` also depend on `on`, even against program order (a cycle).
  void add_dependency(StepId step, StepId on);

  struct Tracker;
  StepId transfer(StepKind kind, Slot src, Slot dst);
  StepId add(Step step, const Slot& read_a, const Slot* read_b, const Slot& write);
  void check_operand(const Slot& operand, const Slot& dst) const;
  void require_same_shape(const char* what) const;
  Slot rebased(Slot slot);
  void check_slot(const Slot& slot, const char* what) const;

  std::string algorithm_;
  int ranks_;
  std::size_t count_;
  Shape shape_;
  bool skip_write_after_read_ = false;  // tests only: a racy schedule for the verifier
  std::vector<Step> steps_;
  std::vector<StepId> dep_ids_;     // every step's dependencies, one run per step
  std::vector<std::size_t> dep_end_;  // end of step i's run in dep_ids_
  std::vector<std::pair<StepId, StepId>> added_deps_;  // tests only: add_dependency
  std::unique_ptr<Tracker> tracker_;
  std::vector<std::size_t> scratch_base_;  // per rank, added to scratch offsets
  std::vector<std::size_t> scratch_high_;  // per rank, one past the highest scratch element used
  std::vector<char> kept_;                 // per rank when focused (keep_only), else empty
};

}  // namespace earlybird::coll
