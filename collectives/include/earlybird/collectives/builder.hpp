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

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace earlybird::coll {

// Which hazards become dependencies. Algorithms always use `all`.
// `skip_write_after_read` exists only for the verifier's tests: it builds a
// schedule that lacks its write-after-read edges, which the verifier must
// report as a race.
enum class Hazards : std::uint8_t { all, skip_write_after_read };

class Builder {
 public:
  static constexpr StepId kNoStep = ~StepId{0};

  // Input and output both of `count` elements (allreduce-like).
  Builder(std::string algorithm, int ranks, std::size_t count, Hazards hazards = Hazards::all);
  // `count` is the collective's count as callers name it; `shape` the buffers.
  Builder(std::string algorithm, int ranks, std::size_t count, Shape shape, Hazards hazards = Hazards::all);
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

  // Test hook: makes `step` also depend on `on`, even against program order,
  // so the verifier's tests can build a cycle. Algorithms never call it.
  void add_dependency_for_tests(StepId step, StepId on);

  // Starts a fresh scratch region: from here on, scratch offsets count from
  // above everything used so far (per rank). Composed schedules (a reduce
  // phase, then a broadcast phase) call it between phases so the second phase
  // does not reuse the first one's slots, which would cost acknowledgement
  // flags the data flow already implies.
  void begin_scratch_region();

  Schedule finish() &&;

 private:
  struct Tracker;
  StepId add(Step step, const Slot& read_a, const Slot* read_b, const Slot& write);
  void check_operand(const Slot& operand, const Slot& dst) const;
  void require_same_shape(const char* what) const;
  Slot rebased(Slot slot);
  void check_slot(const Slot& slot, const char* what) const;

  std::string algorithm_;
  int ranks_;
  std::size_t count_;
  Shape shape_;
  Hazards hazards_ = Hazards::all;
  std::vector<Step> steps_;
  std::vector<std::vector<StepId>> deps_;
  std::unique_ptr<Tracker> tracker_;
  std::vector<std::size_t> scratch_base_;  // per rank, added to scratch offsets
  std::vector<std::size_t> scratch_high_;  // per rank, one past the highest scratch element used
};

}  // namespace earlybird::coll
