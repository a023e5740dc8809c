// Symbolic verifier for the schedules of every collective (contract in
// verify.hpp, per-collective postconditions in postcondition.hpp, the
// structural checks that run first in verify_structure.hpp).
//
// State is kept per (rank, buffer) as an interval map, never per element: an
// interval holds the id of an immutable contribution set (a bitset of P bits),
// the shift that says which input element it carries (element = position +
// shift), and the step that last wrote it. Race detection keeps a second
// interval map of (last writer, readers since) and asks the DAG whether each
// conflicting earlier access is an ancestor of the current step.
#include "interval_map.hpp"
#include "postcondition.hpp"
#include "rank_sets.hpp"
#include "verify_dag.hpp"
#include "verify_structure.hpp"

#include <earlybird/collectives/verify.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace earlybird::coll {
namespace {

using detail::Conflict;
using detail::has_separate_left;
using detail::IntervalMap;
using detail::kBuffers;
using detail::kNoStep;
using detail::kUndefined;
using detail::OutputRegion;
using detail::RaceDetector;
using detail::RandomOrder;
using detail::RankSets;
using detail::SetId;

// What one element interval holds: the contributions of the ranks in `set` to
// input element (position + shift), and the step that put it there.
struct Content {
  SetId set = kUndefined;
  std::int64_t shift = 0;
  StepId writer = kNoStep;
};

// A piece of a slot's contents, at `offset` from the start of the slot. Its
// shift is relative to the slot: it carries input element (offset + shift).
struct Piece {
  std::size_t offset = 0;
  std::size_t count = 0;
  Content content;
};

std::int64_t signed_position(std::size_t position) { return static_cast<std::int64_t>(position); }

struct Failure {
  std::string message;
};

class Verifier {
 public:
  Verifier(const Schedule& schedule, Collective collective, const VerifyOptions& options)
      : schedule_(schedule),
        collective_(collective),
        options_(options),
        sets_(schedule.ranks()),
        contents_(static_cast<std::size_t>(schedule.ranks()) * kBuffers) {
    for (int r = 0; r < schedule.ranks(); ++r)
      of({r, Buffer::input, {}}).for_each({0, schedule.shape().input}, [&](Range, Content& c) {
        c = {RankSets::single(r), 0, kNoStep};
      });
  }

  VerifyReport run() {
    VerifyReport report;
    try {
      const detail::StructureReport structure = detail::check_structure(schedule_, collective_);
      if (!structure.problem.empty()) fail(structure.problem);
      if (schedule_.steps().size() <= options_.race_check_max_steps)
        races_ = std::make_unique<RaceDetector>(schedule_, structure.program_order,
                                                [this](int rank) { return input_at(rank); });
      run_steps(report.steps_run);
      check_outputs();
    } catch (const Failure& failure) {
      report.ok = false;
      report.error = failure.message;
    }
    return report;
  }

 private:
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
    if (races_ && !copies_onto_itself(step)) check_races(id, step);
    // Both operands are read before dst changes: src may be dst itself
    // (dst = left op dst).
    read_pieces(id, step.src, src_pieces_);
    if (separate_left) {  // dst takes left's contents, then src is reduced in
      read_pieces(id, step.left, left_pieces_);
      copy_into(id, step.dst, left_pieces_);
    }
    if (step.kind == StepKind::reduce)
      reduce_into(id, step.dst, src_pieces_);
    else
      copy_into(id, step.dst, src_pieces_);
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

  // Where a rank's input lies in its output in place (input_in_output).
  std::size_t input_at(int rank) const {
    return input_in_output(collective_, rank, schedule_.shape().input);
  }

  // In place, a copy of input onto the output memory it is: the runtime
  // skips it (it moves nothing), so it neither reads nor writes.
  bool copies_onto_itself(const Step& step) const {
    return step.kind == StepKind::copy && step.src.buffer == Buffer::input && step.dst.buffer == Buffer::output &&
           step.src.rank == step.dst.rank && step.src.range.count == step.dst.range.count &&
           step.dst.range.begin == step.src.range.begin + input_at(step.src.rank);
  }

  // Input may be output's memory (an in-place call): reading input[range] is
  // only safe while that memory of the output holds nothing written yet, or
  // this rank's own input there (the same bytes: an allgather's own block).
  void check_in_place(StepId id, const Slot& input) {
    const std::size_t at = input_at(input.rank);
    const SetId own = RankSets::single(input.rank);
    const Range memory{input.range.begin + at, input.range.count};
    of({input.rank, Buffer::output, {}}).visit(memory, [&](Range piece, const Content& c) {
      if (c.set != kUndefined && !(c.set == own && c.shift == -signed_position(at)))
        fail_at(id, "in-place hazard: reads input at element " + std::to_string(piece.begin - at) + " after " +
                        step_name(c.writer) + " wrote other data to output element " + std::to_string(piece.begin));
    });
  }

  // The pieces of `src`, with shifts made relative to the slot's start.
  void read_pieces(StepId id, const Slot& src, std::vector<Piece>& pieces) {
    pieces.clear();
    of(src).visit(src.range, [&](Range piece, const Content& c) {
      if (c.set == kUndefined)
        fail_at(id, "reads undefined data at " + element_name(src, piece.begin));
      Content relative = c;
      relative.shift += signed_position(src.range.begin);
      pieces.push_back({piece.begin - src.range.begin, piece.count, relative});
    });
  }

  // Calls visit(piece, content of dst, source content) for every interval of
  // dst, with dst split so that each interval lies in one source piece; the
  // source content's shift is already made absolute for dst.
  template <class Visit>
  void zip_with_source(const Slot& dst, const std::vector<Piece>& source, Visit&& visit) {
    auto& map = of(dst);
    for (std::size_t i = 1; i < source.size(); ++i) map.split_at(dst.range.begin + source[i].offset);
    std::size_t index = 0;
    map.for_each(dst.range, [&](Range piece, Content& c) {
      while (source[index].offset + source[index].count <= piece.begin - dst.range.begin) ++index;
      Content content = source[index].content;
      content.shift -= signed_position(dst.range.begin);
      visit(piece, c, content);
    });
  }

  void copy_into(StepId id, const Slot& dst, const std::vector<Piece>& source) {
    zip_with_source(dst, source, [&](Range, Content& c, const Content& src) { c = {src.set, src.shift, id}; });
  }

  void reduce_into(StepId id, const Slot& dst, const std::vector<Piece>& source) {
    zip_with_source(dst, source, [&](Range piece, Content& c, const Content& src) {
      check_combinable(id, element_name(dst, piece.begin), signed_position(piece.begin), c, src);
      c = {sets_.unite(c.set, src.set), c.shift, id};
    });
  }

  // left op right must combine the same input element of disjoint sets of
  // ranks, and in ordered mode adjacent rank intervals, left below right.
  void check_combinable(StepId id, const std::string& where, std::int64_t position, const Content& left,
                        const Content& right) const {
    if (left.set == kUndefined) fail_at(id, "reduces into undefined data at " + where);
    if (left.shift != right.shift)
      fail_at(id, "misaligned: combines input element " + std::to_string(position + left.shift) + " of " +
                      sets_.describe(left.set) + " with input element " + std::to_string(position + right.shift) +
                      " of " + sets_.describe(right.set) + " at " + where);
    if (const int both = sets_.first_common(left.set, right.set); both >= 0)
      fail_at(id, "double counting: both operands hold rank " + std::to_string(both) + " at " + where + " (" +
                      sets_.describe(left.set) + " and " + sets_.describe(right.set) + ")");
    if (options_.ordered && !in_rank_order(left.set, right.set))
      fail_at(id, "out of rank order: combines " + sets_.describe(left.set) + " (left) with " +
                      sets_.describe(right.set) + " (right) at " + where +
                      "; ordered mode needs left = [a,b] and right = [b+1,c]");
  }

  bool in_rank_order(SetId left, SetId right) const {
    return sets_.is_interval(left) && sets_.is_interval(right) && sets_.highest(left) + 1 == sets_.lowest(right);
  }

  void check_outputs() {
    for (int r = 0; r < schedule_.ranks(); ++r)
      for (const OutputRegion& region :
           detail::expected_output(collective_, r, schedule_.ranks(), schedule_.shape()))
        check_region(r, region);
  }

  void check_region(int rank, const OutputRegion& region) {
    const Slot output{rank, Buffer::output, region.range};
    of(output).visit(region.range, [&](Range piece, const Content& c) {
      const std::string where = element_name(output, piece.begin);
      if (c.set == kUndefined)
        fail(where + ".." + std::to_string(piece.end()) + " is undefined at the end: no step wrote it");
      check_contributors(where, c, region.contributor);
      if (c.shift != region.shift)
        fail(where + " holds input element " + std::to_string(signed_position(piece.begin) + c.shift) +
             " of its contributors where element " + std::to_string(signed_position(piece.begin) + region.shift) +
             " belongs, last written by " + step_name(c.writer));
    });
  }

  void check_contributors(const std::string& where, const Content& c, int contributor) const {
    if (contributor == detail::kEveryRank) {
      if (const int missing = sets_.first_missing(c.set); missing >= 0)
        fail(where + " misses the contribution of rank " + std::to_string(missing) + " (holds " +
             sets_.describe(c.set) + "), last written by " + step_name(c.writer));
      return;
    }
    if (sets_.size(c.set) != 1 || !sets_.contains(c.set, contributor))
      fail(where + " holds " + sets_.describe(c.set) + " where exactly {" + std::to_string(contributor) +
           "} belongs, last written by " + step_name(c.writer));
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

  std::string step_name(StepId id) const { return detail::step_name(schedule_, id); }

  static std::string element_name(const Slot& slot, std::size_t element) {
    return "rank " + std::to_string(slot.rank) + " " + to_string(slot.buffer) + " element " +
           std::to_string(element);
  }

  IntervalMap<Content>& of(const Slot& slot) {
    return contents_[static_cast<std::size_t>(slot.rank) * kBuffers + static_cast<std::size_t>(slot.buffer)];
  }

  const Schedule& schedule_;
  Collective collective_;
  VerifyOptions options_;
  RankSets sets_;
  std::vector<IntervalMap<Content>> contents_;
  std::unique_ptr<RaceDetector> races_;
  std::vector<Piece> src_pieces_;
  std::vector<Piece> left_pieces_;
};

}  // namespace

VerifyReport verify(const Schedule& schedule, Collective collective, const VerifyOptions& options) {
  return Verifier(schedule, collective, options).run();
}

VerifyReport verify_allreduce(const Schedule& schedule, const VerifyOptions& options) {
  return verify(schedule, Collective::allreduce, options);
}

}  // namespace earlybird::coll
