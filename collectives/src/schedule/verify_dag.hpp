// Internal to the verifier: questions about a schedule's dependency DAG.
//   Ancestry      is step a an ancestor of step b?
//   RaceDetector  per element, the last writer and the readers since; reports
//                 an access whose conflicting predecessors are not ancestors.
//   RandomOrder   the steps in a random topological order.
#pragma once

#include "interval_map.hpp"

#include <earlybird/collectives/schedule.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <random>
#include <vector>

namespace earlybird::coll::detail {

constexpr StepId kNoStep = ~StepId{0};
// Memories tracked per rank: input, output, scratch.
constexpr std::size_t kBuffers = 3;

struct Access {
  StepId writer = kNoStep;
  std::vector<StepId> readers;  // since the last write
};

// An earlier access that conflicts with the current step and is not ordered
// before it by the DAG.
struct Conflict {
  StepId other = kNoStep;
  std::size_t element = 0;
};

// Answers "is step a an ancestor of step b?" on the schedule's DAG. Every
// dependency the Builder derives is direct, so the common case is one scan of
// b's dependency list; otherwise a depth-first search backwards from b, which
// in a schedule in program order never needs to visit steps before a.
class Ancestry {
 public:
  Ancestry(const Schedule& schedule, bool program_order)
      : schedule_(schedule), program_order_(program_order), mark_(schedule.steps().size(), 0) {}

  bool is_ancestor(StepId a, StepId b) {
    const auto direct = schedule_.deps(b);
    if (std::find(direct.begin(), direct.end(), a) != direct.end()) return true;
    next_stamp();
    stack_.assign(1, b);
    while (!stack_.empty()) {
      const StepId x = stack_.back();
      stack_.pop_back();
      for (StepId d : schedule_.deps(x)) {
        if (d == a) return true;
        if (mark_[d] == stamp_ || (program_order_ && d < a)) continue;
        mark_[d] = stamp_;
        stack_.push_back(d);
      }
    }
    return false;
  }

 private:
  void next_stamp() {
    if (++stamp_ == 0) {
      std::fill(mark_.begin(), mark_.end(), 0);
      stamp_ = 1;
    }
  }

  const Schedule& schedule_;
  bool program_order_;
  std::vector<std::uint32_t> mark_;
  std::uint32_t stamp_ = 0;
  std::vector<StepId> stack_;
};

// Remembers, per element interval, the last writer and the readers since, and
// reports an access whose conflicting predecessors are not its ancestors.
// Input is output's memory (in place): an access to a rank's input element x
// is one to its output element x + input_at(rank) (coll::input_in_output).
class RaceDetector {
 public:
  RaceDetector(const Schedule& schedule, bool program_order, std::function<std::size_t(int)> input_at)
      : input_at_(std::move(input_at)),
        ancestry_(schedule, program_order),
        maps_(static_cast<std::size_t>(schedule.ranks()) * kBuffers) {}

  Conflict read(StepId step, const Slot& slot) {
    Conflict found;
    of(slot).for_each(memory_range(slot), [&](Range piece, Access& access) {
      if (found.other == kNoStep && unordered(access.writer, step)) found = {access.writer, piece.begin};
      if (access.readers.empty() || access.readers.back() != step) access.readers.push_back(step);
    });
    return found;
  }

  Conflict write(StepId step, const Slot& slot) {
    Conflict found;
    of(slot).for_each(memory_range(slot), [&](Range piece, Access& access) {
      if (found.other == kNoStep && unordered(access.writer, step)) found = {access.writer, piece.begin};
      for (StepId reader : access.readers)
        if (found.other == kNoStep && unordered(reader, step)) found = {reader, piece.begin};
      access.writer = step;
      access.readers.clear();
    });
    return found;
  }

 private:
  bool unordered(StepId earlier, StepId step) {
    return earlier != kNoStep && earlier != step && !ancestry_.is_ancestor(earlier, step);
  }
  IntervalMap<Access>& of(const Slot& slot) {
    const Buffer memory = slot.buffer == Buffer::input ? Buffer::output : slot.buffer;
    return maps_[static_cast<std::size_t>(slot.rank) * kBuffers + static_cast<std::size_t>(memory)];
  }
  Range memory_range(const Slot& slot) const {
    if (slot.buffer != Buffer::input) return slot.range;
    return {slot.range.begin + input_at_(slot.rank), slot.range.count};
  }

  std::function<std::size_t(int)> input_at_;
  Ancestry ancestry_;
  std::vector<IntervalMap<Access>> maps_;
};

// Hands out the steps of a DAG in a random topological order.
class RandomOrder {
 public:
  RandomOrder(const Schedule& schedule, std::uint64_t seed) : rng_(seed) {
    const std::size_t n = schedule.steps().size();
    waits_.resize(n);
    succ_begin_.assign(n + 1, 0);
    for (StepId id = 0; id < n; ++id) {
      waits_[id] = static_cast<std::uint32_t>(schedule.deps(id).size());
      for (StepId d : schedule.deps(id)) ++succ_begin_[d + 1];
      if (waits_[id] == 0) ready_.push_back(id);
    }
    for (std::size_t i = 0; i < n; ++i) succ_begin_[i + 1] += succ_begin_[i];
    succ_.resize(succ_begin_[n]);
    std::vector<std::size_t> fill(succ_begin_.begin(), succ_begin_.end() - 1);
    for (StepId id = 0; id < n; ++id)
      for (StepId d : schedule.deps(id)) succ_[fill[d]++] = id;
  }

  // False when no step is ready.
  bool next(StepId& step) {
    if (ready_.empty()) return false;
    const std::size_t pick = std::uniform_int_distribution<std::size_t>(0, ready_.size() - 1)(rng_);
    step = ready_[pick];
    ready_[pick] = ready_.back();
    ready_.pop_back();
    return true;
  }

  // After the run: true for the steps that waited forever (on a cycle or behind one).
  bool never_ready(StepId step) const { return waits_[step] > 0; }

  void done(StepId step) {
    for (std::size_t i = succ_begin_[step]; i < succ_begin_[step + 1]; ++i)
      if (--waits_[succ_[i]] == 0) ready_.push_back(succ_[i]);
  }

 private:
  std::mt19937_64 rng_;
  std::vector<std::uint32_t> waits_;
  std::vector<std::size_t> succ_begin_;
  std::vector<StepId> succ_;
  std::vector<StepId> ready_;
};

}  // namespace earlybird::coll::detail
