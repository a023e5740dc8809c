// The schedule IR: what an algorithm returns and what the runtime executes.
//
// A schedule is a global-view program over virtual ranks 0..P-1. Each step
// moves or combines one *slot* (rank, buffer, element range). Dependencies are
// never written by hand: the Builder derives them from read/write hazards, so
// a Schedule is always a DAG in program order (a dependency points backwards).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace earlybird::coll {

// The three buffers a rank owns during a collective. `input` is the user's
// (read-only) input, `output` the user's output, `scratch` receive space in the
// rank's RMA window. Only scratch can be the target of a put or source of a get.
enum class Buffer : std::uint8_t { input, output, scratch };

// A half-open element range [begin, begin + count).
struct Range {
  std::size_t begin = 0;
  std::size_t count = 0;

  std::size_t end() const { return begin + count; }
  bool empty() const { return count == 0; }
  bool overlaps(const Range& other) const {
    return !empty() && !other.empty() && begin < other.end() && other.begin < end();
  }
  bool operator==(const Range&) const = default;
};

// Element counts of every rank's input and output buffer. An allreduce has
// input = output = count; an allgather output = P x input; a reduce-scatter
// input = P x output.
struct Shape {
  std::size_t input = 0;
  std::size_t output = 0;
  // Input and output are one buffer on every rank (a bcast's, always): a
  // copy from input to the same range of output does nothing at run time.
  bool in_place = false;
  bool operator==(const Shape&) const = default;
};

struct Slot {
  int rank = 0;  // virtual rank
  Buffer buffer = Buffer::output;
  Range range;
};

// put:    owner = src.rank; copies a local slice into a peer's scratch.
// get:    owner = dst.rank; pulls a peer's scratch slice into a local slot.
// reduce: owner = the rank of all three slots; dst = left (op) src. `left`
//         may be dst itself (dst = dst op src) or another slot, e.g. the
//         rank's input, which saves copying input to output first.
// copy:   owner = both ranks; dst = src.
enum class StepKind : std::uint8_t { put, get, reduce, copy };

using StepId = std::uint32_t;

struct Step {
  StepKind kind = StepKind::copy;
  int owner = 0;  // the virtual rank that executes the step
  Slot src;
  Slot dst;
  Slot left;  // reduce only: the left operand

  bool is_transfer() const { return kind == StepKind::put || kind == StepKind::get; }
  // The rank on the far side of a transfer (-1 for local steps).
  int peer() const;
};

// A cross-rank edge as seen by its source step: after the step completes, its
// owner raises flag `flag` in the window of `target`.
struct Notification {
  int target = 0;
  std::uint32_t flag = 0;
  bool operator==(const Notification&) const = default;
};

// Immutable result of Builder::finish(). Dependencies and notifications are
// stored in compressed (CSR) form because schedules for P = 1024 have millions
// of steps.
class Schedule {
 public:
  const std::string& algorithm() const { return algorithm_; }
  int ranks() const { return ranks_; }
  // The collective's element count as its generator was called with it.
  std::size_t count() const { return count_; }
  Shape shape() const { return shape_; }
  std::span<const Step> steps() const { return steps_; }
  std::span<const StepId> deps(StepId step) const {
    return {dep_ids_.data() + dep_begin_[step], dep_ids_.data() + dep_begin_[step + 1]};
  }
  std::span<const Notification> notifications(StepId step) const {
    return {note_list_.data() + note_begin_[step], note_list_.data() + note_begin_[step + 1]};
  }
  // Number of flags rank `rank` receives during one execution.
  std::uint32_t flag_count(int rank) const { return flag_count_[static_cast<std::size_t>(rank)]; }
  // Scratch elements rank `rank` needs (one past the highest scratch element used).
  std::size_t scratch_elems(int rank) const { return scratch_elems_[static_cast<std::size_t>(rank)]; }
  std::size_t max_scratch_elems() const;
  std::uint32_t max_flag_count() const;

 private:
  friend class Builder;
  std::string algorithm_;
  int ranks_ = 0;
  std::size_t count_ = 0;
  Shape shape_;
  std::vector<Step> steps_;
  std::vector<std::size_t> dep_begin_;
  std::vector<StepId> dep_ids_;
  std::vector<std::size_t> note_begin_;
  std::vector<Notification> note_list_;
  std::vector<std::uint32_t> flag_count_;
  std::vector<std::size_t> scratch_elems_;
};

// Per-rank cost figures of a schedule, used by the unit tests to check that
// each algorithm really has the step and byte counts docs/algorithms.md claims.
struct RankStats {
  std::size_t puts = 0;          // transfers this rank issues (put) or receives by get
  std::size_t elems_sent = 0;    // elements this rank moves to peers (put src + get by peer)
  std::size_t elems_reduced = 0; // elements combined by this rank's reduce steps
};
struct ScheduleStats {
  std::vector<RankStats> per_rank;
  // Longest chain of transfers along dependencies: the schedule's number of
  // communication rounds (latency terms) under the Hockney model.
  std::size_t rounds = 0;
};
ScheduleStats schedule_stats(const Schedule& schedule);

const char* to_string(StepKind kind);
const char* to_string(Buffer buffer);
std::string to_string(const Step& step);

}  // namespace earlybird::coll
