// Checks that the symbolic verifier accepts correct hand-written schedules and reports each kind of wrong one.
#include "schedule/builder_test_access.hpp"
#include "unit_support.hpp"

#include <earlybird/collectives/builder.hpp>
#include <earlybird/collectives/verify.hpp>

#include <doctest/doctest.h>

#include <string>

using namespace earlybird::coll;
using namespace earlybird::coll::test;

namespace {

constexpr std::uint64_t kSeeds = 16;

// Verifies under several seeds; every run must fail with a message holding
// `problem`, the schedule's name, P and count, and (if given) the step.
void check_reported(const Schedule& s, const std::string& problem, StepId step = Builder::kNoStep,
                    VerifyOptions options = {}) {
  const std::string context =
      s.algorithm() + " P=" + std::to_string(s.ranks()) + " count=" + std::to_string(s.count());
  for (std::uint64_t seed = 1; seed <= kSeeds; ++seed) {
    options.seed = seed;
    const VerifyReport report = verify_allreduce(s, options);
    CAPTURE(seed);
    REQUIRE_FALSE(report.ok);
    CHECK_MESSAGE(contains(report.error, problem), report.error);
    CHECK_MESSAGE(contains(report.error, context), report.error);
    if (step != Builder::kNoStep)
      CHECK_MESSAGE(contains(report.error, to_string(s.steps()[step])), report.error);
  }
}

void check_passes(const Schedule& s, VerifyOptions options = {}) {
  for (std::uint64_t seed = 1; seed <= kSeeds; ++seed) {
    options.seed = seed;
    const VerifyReport report = verify_allreduce(s, options);
    CHECK_MESSAGE(report.ok, report.error);
    CHECK(report.error.empty());
    CHECK(report.steps_run == s.steps().size());
  }
}

// P = 2, count = 1, both ranks pull the peer's staged value with get.
Schedule exchange_by_get() {
  Builder b("exchange_by_get", 2, 1);
  b.copy_input_to_output();
  for (int r = 0; r < 2; ++r) b.copy(scratch(r, 0, 1), out(r, 0, 1));
  for (int r = 0; r < 2; ++r) b.get(scratch(1 - r, 0, 1), scratch(r, 1, 1));
  for (int r = 0; r < 2; ++r) b.reduce(out(r, 0, 1), scratch(r, 1, 1));
  return std::move(b).finish();
}

}  // namespace

TEST_CASE("correct hand-written schedules pass") {
  check_passes(scratch_reuse_schedule().schedule);
  check_passes(exchange_by_get());
}

TEST_CASE("one rank: copying input to output is an allreduce; count 0 needs no step") {
  Builder one("single", 1, 5);
  one.copy_input_to_output();
  check_passes(std::move(one).finish());
  check_passes(Builder("nothing", 3, 0).finish());
}

TEST_CASE("double counting: reducing the same contribution twice") {
  Builder b("twice", 2, 1);
  b.copy_input_to_output();
  b.put(out(0, 0, 1), scratch(1, 0, 1));
  b.reduce(out(1, 0, 1), scratch(1, 0, 1));
  const StepId again = b.reduce(out(1, 0, 1), scratch(1, 0, 1));
  check_reported(std::move(b).finish(), "double counting", again);
}

TEST_CASE("a missing contribution in the final output") {
  // Rank 2 overwrites its own contribution with ranks 0 and 1's partial sum.
  Builder b("forgets_rank_2", 3, 1);
  b.copy_input_to_output();
  b.put(out(0, 0, 1), scratch(1, 0, 1));
  b.reduce(out(1, 0, 1), scratch(1, 0, 1));
  b.put(out(1, 0, 1), scratch(0, 0, 1));
  b.copy(out(0, 0, 1), scratch(0, 0, 1));
  b.put(out(1, 0, 1), scratch(2, 0, 1));
  b.copy(out(2, 0, 1), scratch(2, 0, 1));
  check_reported(std::move(b).finish(), "misses the contribution of rank 2");
}

TEST_CASE("reading scratch nothing wrote") {
  Builder b("reads_garbage", 2, 1);
  b.copy_input_to_output();
  const StepId bad = b.reduce(out(1, 0, 1), scratch(1, 0, 1));
  check_reported(std::move(b).finish(), "reads undefined data at rank 1 scratch element 0", bad);
}

TEST_CASE("reducing into an output nothing wrote") {
  Builder b("no_copy", 2, 1);
  b.put(in(0, 0, 1), scratch(1, 0, 1));
  const StepId bad = b.reduce(out(1, 0, 1), scratch(1, 0, 1));
  check_reported(std::move(b).finish(), "reduces into undefined data", bad);
}

TEST_CASE("output left undefined") {
  Builder b("partial_copy", 1, 3);
  b.copy(out(0, 0, 2), in(0, 0, 2));
  check_reported(std::move(b).finish(), "rank 0 output element 2..3 is undefined");
}

TEST_CASE("in-place hazard: input read after output of that range was written") {
  Builder b("reads_input_late", 2, 2);
  b.put(in(1, 0, 2), scratch(0, 0, 2));
  const StepId sum = b.reduce(out(0, 0, 2), in(0, 0, 2), scratch(0, 0, 2));
  const StepId late = b.copy(scratch(0, 2, 1), in(0, 1, 1));  // after the sum: ordered below
  BuilderTestAccess::add_dependency(b, late, sum);
  check_reported(std::move(b).finish(), "in-place hazard", late);
}

TEST_CASE("in place: input read after its own bytes were copied onto it is no hazard") {
  // The copy of input onto the output memory it is moves nothing at run time.
  Builder b("reads_input_after_own_copy", 1, 2);
  b.copy_input_to_output();
  const StepId after = b.copy(scratch(0, 0, 1), in(0, 1, 1));
  BuilderTestAccess::add_dependency(b, after, 0);
  check_passes(std::move(b).finish());
}

namespace {
// Rank 0's put reads its input while its reduction may already have
// overwritten it with the sum (in place).
Schedule unordered_input_read(Hazards hazards) {
  Builder b = BuilderTestAccess::builder("unordered_input_read", 2, 1, hazards);
  b.put(in(0, 0, 1), scratch(1, 0, 1));
  b.put(in(1, 0, 1), scratch(0, 0, 1));
  for (int r = 0; r < 2; ++r) b.reduce(out(r, 0, 1), in(r, 0, 1), scratch(r, 0, 1));
  return std::move(b).finish();
}
}  // namespace

TEST_CASE("in-place: an input read the DAG does not order before the output write") {
  check_reported(unordered_input_read(Hazards::skip_write_after_read), "in-place");
  // The Builder treats input and output as one memory, so it derives the edge.
  check_passes(unordered_input_read(Hazards::all));
}

TEST_CASE("a race: a write-after-read edge missing inside one rank") {
  Builder b = BuilderTestAccess::builder("local_war", 1, 2, Hazards::skip_write_after_read);
  b.copy_input_to_output();
  b.copy(scratch(0, 0, 1), out(0, 0, 1));
  b.copy(scratch(0, 1, 1), scratch(0, 0, 1));  // reads scratch[0]
  b.copy(scratch(0, 0, 1), out(0, 1, 1));      // overwrites it, unordered with the read
  b.copy(out(0, 0, 1), scratch(0, 1, 1));
  check_reported(std::move(b).finish(), "race with step");
}

TEST_CASE("no race when the conflicting access is ordered only transitively") {
  // Without write-after-read edges, the overwrite of scratch[0] is still
  // ordered after its reader through a chain of read-after-write edges.
  Builder b = BuilderTestAccess::builder("transitive", 1, 1, Hazards::skip_write_after_read);
  b.copy_input_to_output();
  b.copy(scratch(0, 0, 1), out(0, 0, 1));
  b.copy(scratch(0, 1, 1), scratch(0, 0, 1));  // reads scratch[0]
  b.copy(scratch(0, 2, 1), scratch(0, 1, 1));
  b.copy(scratch(0, 0, 1), scratch(0, 2, 1));  // overwrites scratch[0], after the reader
  b.copy(out(0, 0, 1), scratch(0, 0, 1));
  check_passes(std::move(b).finish());
}

TEST_CASE("races are not checked above race_check_max_steps") {
  const ScratchReuse r =
      scratch_reuse_schedule(BuilderTestAccess::builder("scratch_reuse", 2, 2, Hazards::skip_write_after_read));
  VerifyOptions options;
  options.race_check_max_steps = r.schedule.steps().size() - 1;
  for (std::uint64_t seed = 1; seed <= kSeeds; ++seed) {
    options.seed = seed;
    const VerifyReport report = verify_allreduce(r.schedule, options);
    CHECK_FALSE(contains(report.error, "race"));
  }
}

TEST_CASE("a cycle: steps that never become ready") {
  Builder b("cyclic", 2, 1);
  b.copy_input_to_output();
  const StepId put = b.put(out(0, 0, 1), scratch(1, 0, 1));
  const StepId reduce = b.reduce(out(1, 0, 1), scratch(1, 0, 1));
  BuilderTestAccess::add_dependency(b, put, reduce);
  check_reported(std::move(b).finish(), "cycle: 2 of 4 steps never become ready");
}
