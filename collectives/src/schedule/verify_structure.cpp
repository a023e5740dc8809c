// The verifier's structural checks (verify_structure.hpp).
#include "verify_structure.hpp"

#include "postcondition.hpp"
#include "verify_dag.hpp"

namespace earlybird::coll::detail {
namespace {

std::string shape_problem(const Schedule& schedule, Collective collective) {
  const Shape expected = shape_of(collective, schedule.ranks(), schedule.count());
  // Sizes only: a phase composed into a schedule of its own (a bcast phase
  // after a reduce) need not say its buffers are one (Shape::in_place).
  if (schedule.shape().input == expected.input && schedule.shape().output == expected.output) return {};
  return std::string("buffers of input ") + std::to_string(schedule.shape().input) + " and output " +
         std::to_string(schedule.shape().output) + " elements, but a " + to_string(collective) +
         " of this count has " + std::to_string(expected.input) + " and " + std::to_string(expected.output);
}

std::string step_shape_problem(const Step& step, int ranks) {
  for (int rank : {step.owner, step.src.rank, step.dst.rank})
    if (rank < 0 || rank >= ranks) return "names rank " + std::to_string(rank);
  if (step.src.range.count != step.dst.range.count) return "source and destination differ in length";
  if (step.dst.buffer == Buffer::input) return "writes the input buffer";
  if (has_separate_left(step) && (step.left.rank != step.dst.rank || step.left.range.count != step.dst.range.count))
    return "left operand is not a slot of the destination's rank and length";
  return {};
}

std::string access_problem(const Step& step, Collective collective) {
  if (step.dst.buffer == Buffer::output && !may_write_output(collective, step.dst.rank))
    return "writes the output of rank " + std::to_string(step.dst.rank) + ", which a " + to_string(collective) +
           " must leave untouched (only the root's output is written)";
  for (const Slot* read : {&step.src, has_separate_left(step) ? &step.left : nullptr})
    if (read && read->buffer == Buffer::input && !may_read_input(collective, read->rank))
      return "reads the input of rank " + std::to_string(read->rank) + ", which a " + to_string(collective) +
             " must not read (only the root's input is part of the call)";
  return {};
}

}  // namespace

// Rejects malformed steps, steps the collective forbids and dangling
// dependencies; reports whether every dependency points backwards (program
// order), which the race detector's ancestry exploits.
StructureReport check_structure(const Schedule& schedule, Collective collective) {
  StructureReport report;
  report.problem = shape_problem(schedule, collective);
  const auto steps = schedule.steps();
  for (StepId id = 0; id < steps.size() && report.problem.empty(); ++id) {
    std::string problem = step_shape_problem(steps[id], schedule.ranks());
    if (problem.empty()) problem = access_problem(steps[id], collective);
    for (StepId d : schedule.deps(id)) {
      if (problem.empty() && d >= steps.size())
        problem = "depends on step " + std::to_string(d) + ", which does not exist";
      report.program_order = report.program_order && d < id;
    }
    if (!problem.empty()) report.problem = step_name(schedule, id) + ": " + problem;
  }
  return report;
}

bool has_separate_left(const Step& step) {
  return step.kind == StepKind::reduce && (step.left.buffer != step.dst.buffer || step.left.range != step.dst.range);
}

std::string step_name(const Schedule& schedule, StepId id) {
  if (id == kNoStep) return "no step";
  return "step " + std::to_string(id) + " (" + to_string(schedule.steps()[id]) + ")";
}

}  // namespace earlybird::coll::detail
