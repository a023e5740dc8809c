// Symbolic verifier for allreduce schedules (contract in verify.hpp).
//
// State is kept per (rank, buffer) as an interval map, never per element: an
// interval holds the id of an immutable contribution set (a bitset of P bits)
// and the step that last wrote it. Race detection keeps a second interval map
// of (last writer, readers since) and asks the DAG whether each conflicting
// earlier access is an ancestor of the current step.
#include "interval_map.hpp"
#include "rank_sets.hpp"

#include <earlybird/collectives/verify.hpp>

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace earlybird::coll {
namespace {

using detail::IntervalMap;
using detail::kUndefined;
using detail::RankSets;
using detail::SetId;

constexpr StepId kNoStep = ~StepId{0};
constexpr std::size_t kBuffers = 3;

// What one element interval holds, and which step put it there.
struct Content {
  SetId set = kUndefined;
  StepId writer = kNoStep;
};

// A piece of a slot's contents, at `offset` from the start of the slot.
struct Piece {
  std::size_t offset = 0;
  std::size_t count = 0;
  Content content;
};

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
// A read of input also counts as a read of the output it may alias (in place).
class RaceDetector {
 public:
  RaceDetector(const Schedule& schedule, bool program_order)
      : ancestry_(schedule, program_order),
        maps_(static_cast<std::size_t>(schedule.ranks()) * kBuffers) {}

  Conflict read(StepId step, const Slot& slot) {
    Conflict found;
    of(slot).for_each(slot.range, [&](Range piece, Access& access) {
      if (found.other == kNoStep && unordered(access.writer, step)) found = {access.writer, piece.begin};
      if (access.readers.empty() || access.readers.back() != step) access.readers.push_back(step);
    });
    return found;
  }

  Conflict write(StepId step, const Slot& slot) {
    Conflict found;
    of(slot).for_each(slot.range, [&](Range piece, Access& access) {
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

struct Failure {
  std::string message;
};

class AllreduceVerifier {
 public:
  AllreduceVerifier(const Schedule& schedule, const VerifyOptions& options)
      : schedule_(schedule),
        options_(options),
        sets_(schedule.ranks()),
        contents_(static_cast<std::size_t>(schedule.ranks()) * kBuffers) {
    for (int r = 0; r < schedule.ranks(); ++r)
      of({r, Buffer::input, {}}).for_each({0, schedule.shape().input}, [&](Range, Content& c) {
        c.set = RankSets::single(r);
      });
  }

  VerifyReport run() {
    VerifyReport report;
    try {
      const bool program_order = check_structure();
      if (schedule_.steps().size() <= options_.race_check_max_steps)
        races_ = std::make_unique<RaceDetector>(schedule_, program_order);
      run_steps(report.steps_run);
      check_outputs();
    } catch (const Failure& failure) {
      report.ok = false;
      report.error = failure.message;
    }
    return report;
  }

 private:
  // Rejects malformed steps and dangling dependencies; returns whether every
  // dependency points backwards (program order), which Ancestry exploits.
  bool check_structure() const {
    const auto steps = schedule_.steps();
    bool program_order = true;
    for (StepId id = 0; id < steps.size(); ++id) {
      check_step_shape(id, steps[id]);
      for (StepId d : schedule_.deps(id)) {
        if (d >= steps.size())
          fail_at(id, "depends on step " + std::to_string(d) + ", which does not exist");
        program_order = program_order && d < id;
      }
    }
    return program_order;
  }

  void check_step_shape(StepId id, const Step& step) const {
    const int p = schedule_.ranks();
    for (int rank : {step.owner, step.src.rank, step.dst.rank})
      if (rank < 0 || rank >= p) fail_at(id, "names rank " + std::to_string(rank));
    if (step.src.range.count != step.dst.range.count)
      fail_at(id, "source and destination differ in length");
    if (step.dst.buffer == Buffer::input) fail_at(id, "writes the input buffer");
    if (has_separate_left(step) && (step.left.rank != step.dst.rank || step.left.range.count != step.dst.range.count))
      fail_at(id, "left operand is not a slot of the destination's rank and length");
  }

  // A reduce whose left operand is not its destination: dst = left op src.
  static bool has_separate_left(const Step& step) {
    return step.kind == StepKind::reduce &&
           (step.left.buffer != step.dst.buffer || step.left.range != step.dst.range);
  }

  void run_steps(std::size_t& steps_run) {
    RandomOrder order(schedule_, options_.seed);
    StepId id = 0;
    while (order.next(id)) {
      run_step(id);
      order.done(id);
      ++steps_run;
    }
    if (steps_run < schedule_.steps().size()) report_cycle(order, steps_run);
  }

  void run_step(StepId id) {
    const Step& step = schedule_.steps()[id];
    const bool separate_left = has_separate_left(step);
    if (step.src.buffer == Buffer::input) check_in_place(id, step.src);
    if (separate_left && step.left.buffer == Buffer::input) check_in_place(id, step.left);
    if (races_) check_races(id, step);
    if (separate_left) {  // dst takes left's contents, then src is reduced in
      read_pieces(id, step.left, src_pieces_);
      copy_into(id, step.dst);
    }
    read_pieces(id, step.src, src_pieces_);
    if (step.kind == StepKind::reduce)
      reduce_into(id, step.dst);
    else
      copy_into(id, step.dst);
  }

  void check_races(StepId id, const Step& step) {
    Conflict conflict = races_->read(id, step.src);
    if (conflict.other != kNoStep) report_race(id, conflict, step.src);
    if (has_separate_left(step)) {
      conflict = races_->read(id, step.left);
      if (conflict.other != kNoStep) report_race(id, conflict, step.left);
    }
    conflict = races_->write(id, step.dst);
    if (conflict.other != kNoStep) report_race(id, conflict, step.dst);
  }

  // Input may alias output (in-place call): reading input[range] is only safe
  // while nothing has been written to output[range] of that rank.
  void check_in_place(StepId id, const Slot& input) {
    of({input.rank, Buffer::output, {}}).visit(input.range, [&](Range piece, const Content& c) {
      if (c.set != kUndefined)
        fail_at(id, "in-place hazard: reads input at element " + std::to_string(piece.begin) +
                        " after " + step_name(c.writer) + " wrote output there");
    });
  }

  void read_pieces(StepId id, const Slot& src, std::vector<Piece>& pieces) {
    pieces.clear();
    of(src).visit(src.range, [&](Range piece, const Content& c) {
      if (c.set == kUndefined)
        fail_at(id, "reads undefined data at " + element_name(src, piece.begin));
      pieces.push_back({piece.begin - src.range.begin, piece.count, c});
    });
  }

  // Calls visit(piece, content of dst, source piece) for every interval of dst,
  // with dst split so that each interval lies in one source piece.
  template <class Visit>
  void zip_with_source(const Slot& dst, Visit&& visit) {
    auto& map = of(dst);
    for (std::size_t i = 1; i < src_pieces_.size(); ++i) map.split_at(dst.range.begin + src_pieces_[i].offset);
    std::size_t index = 0;
    map.for_each(dst.range, [&](Range piece, Content& c) {
      while (src_pieces_[index].offset + src_pieces_[index].count <= piece.begin - dst.range.begin) ++index;
      visit(piece, c, src_pieces_[index].content);
    });
  }

  void copy_into(StepId id, const Slot& dst) {
    zip_with_source(dst, [&](Range, Content& c, const Content& src) { c = {src.set, id}; });
  }

  void reduce_into(StepId id, const Slot& dst) {
    zip_with_source(dst, [&](Range piece, Content& c, const Content& src) {
      if (c.set == kUndefined)
        fail_at(id, "reduces into undefined data at " + element_name(dst, piece.begin));
      if (const int both = sets_.first_common(c.set, src.set); both >= 0)
        fail_at(id, "double counting: both operands hold rank " + std::to_string(both) + " at " +
                        element_name(dst, piece.begin) + " (" + sets_.describe(c.set) + " and " +
                        sets_.describe(src.set) + ")");
      c = {sets_.unite(c.set, src.set), id};
    });
  }

  void check_outputs() {
    for (int r = 0; r < schedule_.ranks(); ++r) {
      const Slot output{r, Buffer::output, {0, schedule_.shape().output}};
      of(output).visit(output.range, [&](Range piece, const Content& c) {
        if (c.set == kUndefined)
          fail(element_name(output, piece.begin) + ".." + std::to_string(piece.end()) +
               " is undefined at the end: no step wrote it");
        if (const int missing = sets_.first_missing(c.set); missing >= 0)
          fail(element_name(output, piece.begin) + " misses the contribution of rank " +
               std::to_string(missing) + " (holds " + sets_.describe(c.set) + "), last written by " +
               step_name(c.writer));
      });
    }
  }

  [[noreturn]] void report_race(StepId id, const Conflict& conflict, const Slot& slot) const {
    const bool aliased = slot.buffer == Buffer::input ||
                         schedule_.steps()[conflict.other].src.buffer == Buffer::input;
    fail_at(id, std::string(aliased ? "in-place race (input aliases output)" : "race") + " with " +
                    step_name(conflict.other) + " on " + element_name(slot, conflict.element) +
                    ": the DAG does not order them");
  }

  [[noreturn]] void report_cycle(const RandomOrder& order, std::size_t steps_run) const {
    const std::size_t n = schedule_.steps().size();
    StepId stuck = 0;
    while (!order.never_ready(stuck)) ++stuck;
    std::string waits_on;
    for (StepId d : schedule_.deps(stuck))
      if (order.never_ready(d)) waits_on = ", which waits on " + step_name(d);
    fail("cycle: " + std::to_string(n - steps_run) + " of " + std::to_string(n) +
         " steps never become ready, e.g. " + step_name(stuck) + waits_on);
  }

  [[noreturn]] void fail_at(StepId id, const std::string& problem) const {
    fail(step_name(id) + ": " + problem);
  }

  [[noreturn]] void fail(const std::string& problem) const {
    throw Failure{schedule_.algorithm() + " P=" + std::to_string(schedule_.ranks()) +
                  " count=" + std::to_string(schedule_.count()) + ": " + problem};
  }

  std::string step_name(StepId id) const {
    if (id == kNoStep) return "no step";
    return "step " + std::to_string(id) + " (" + to_string(schedule_.steps()[id]) + ")";
  }

  static std::string element_name(const Slot& slot, std::size_t element) {
    return "rank " + std::to_string(slot.rank) + " " + to_string(slot.buffer) + " element " +
           std::to_string(element);
  }

  IntervalMap<Content>& of(const Slot& slot) {
    return contents_[static_cast<std::size_t>(slot.rank) * kBuffers + static_cast<std::size_t>(slot.buffer)];
  }

  const Schedule& schedule_;
  VerifyOptions options_;
  RankSets sets_;
  std::vector<IntervalMap<Content>> contents_;
  std::unique_ptr<RaceDetector> races_;
  std::vector<Piece> src_pieces_;
};

}  // namespace

VerifyReport verify_allreduce(const Schedule& schedule, const VerifyOptions& options) {
  return AllreduceVerifier(schedule, options).run();
}

VerifyReport verify(const Schedule& schedule, Collective collective, const VerifyOptions& options) {
  if (collective == Collective::allreduce) return verify_allreduce(schedule, options);
  return {false, std::string("verify: no postcondition for ") + to_string(collective) + " yet", 0};
}

}  // namespace earlybird::coll
