// Checks the dependencies and notifications the Builder derives from hazards, and its argument checks.
#include "schedule/builder_test_access.hpp"
#include "unit_support.hpp"

#include <earlybird/collectives/builder.hpp>
#include <earlybird/collectives/verify.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

using namespace earlybird::coll;
using namespace earlybird::coll::test;

namespace {

std::vector<StepId> deps_of(const Schedule& s, StepId step) {
  const auto deps = s.deps(step);
  std::vector<StepId> sorted(deps.begin(), deps.end());
  std::sort(sorted.begin(), sorted.end());
  return sorted;
}

bool notifies(const Schedule& s, StepId step, int target) {
  const auto notes = s.notifications(step);
  return std::any_of(notes.begin(), notes.end(), [&](const Notification& n) { return n.target == target; });
}

}  // namespace

TEST_CASE("read-after-write: a step reading a slot depends on its last writer") {
  Builder b("raw", 1, 4);
  const StepId write = b.copy(out(0, 0, 2), in(0, 0, 2));
  const StepId read = b.copy(out(0, 2, 2), out(0, 0, 2));
  const Schedule s = std::move(b).finish();
  CHECK(deps_of(s, write).empty());
  CHECK(deps_of(s, read) == std::vector<StepId>{write});
}

TEST_CASE("write-after-write: a step writing a slot depends on its last writer") {
  Builder b("waw", 1, 4);
  const StepId first = b.copy(out(0, 0, 2), in(0, 0, 2));
  const StepId second = b.copy(out(0, 0, 2), in(0, 2, 2));
  const Schedule s = std::move(b).finish();
  CHECK(deps_of(s, second) == std::vector<StepId>{first});
}

TEST_CASE("write-after-read: a step writing a slot depends on every reader since the last write") {
  for (Hazards hazards : {Hazards::all, Hazards::skip_write_after_read}) {
    Builder b = BuilderTestAccess::builder("war", 1, 4, hazards);
    const StepId write = b.copy(out(0, 0, 2), in(0, 0, 2));
    const StepId read_a = b.copy(scratch(0, 0, 2), out(0, 0, 2));
    const StepId read_b = b.copy(scratch(0, 2, 1), out(0, 1, 1));
    const StepId overwrite = b.copy(out(0, 0, 2), in(0, 2, 2));
    const Schedule s = std::move(b).finish();
    if (hazards == Hazards::all)
      CHECK(deps_of(s, overwrite) == std::vector<StepId>{write, read_a, read_b});
    else
      CHECK(deps_of(s, overwrite) == std::vector<StepId>{write});
  }
}

TEST_CASE("disjoint ranges create no dependency; overlapping ones do") {
  Builder b("ranges", 1, 6);
  const StepId left = b.copy(out(0, 0, 3), in(0, 0, 3));
  const StepId right = b.copy(out(0, 3, 3), in(0, 3, 3));
  const StepId straddle = b.copy(scratch(0, 0, 2), out(0, 2, 2));
  const Schedule s = std::move(b).finish();
  CHECK(deps_of(s, right).empty());
  CHECK(deps_of(s, straddle) == std::vector<StepId>{left, right});
}

TEST_CASE("reduce reads its destination too") {
  Builder b("reduce", 1, 2);
  const StepId first = b.copy(out(0, 0, 2), in(0, 0, 2));
  const StepId staged = b.copy(scratch(0, 0, 2), in(0, 0, 2));
  const StepId reduce = b.reduce(out(0, 0, 2), scratch(0, 0, 2));
  const Schedule s = std::move(b).finish();
  CHECK(deps_of(s, reduce) == std::vector<StepId>{first, staged});
}

TEST_CASE("cross-rank read-after-write: the reduce of a put's data waits on a notification") {
  const ScratchReuse r = scratch_reuse_schedule();
  const Schedule& s = r.schedule;
  const auto deps = deps_of(s, r.first_reduce);
  CHECK(std::count(deps.begin(), deps.end(), r.first_put) == 1);
  CHECK(notifies(s, r.first_put, 1));
}

TEST_CASE("cross-rank write-after-read: a put into a reused scratch slot waits for the peer's reduce") {
  const ScratchReuse r = scratch_reuse_schedule();
  const Schedule& s = r.schedule;
  const auto deps = deps_of(s, r.second_put);
  CHECK(std::count(deps.begin(), deps.end(), r.first_reduce) == 1);  // the acknowledgement
  CHECK(std::count(deps.begin(), deps.end(), r.first_put) == 1);     // write-after-write
  CHECK(notifies(s, r.first_reduce, 0));
  CHECK(s.flag_count(0) >= 1);
}

TEST_CASE("without write-after-read edges the reused slot is not acknowledged") {
  const ScratchReuse r =
      scratch_reuse_schedule(BuilderTestAccess::builder("scratch_reuse", 2, 2, Hazards::skip_write_after_read));
  const auto deps = deps_of(r.schedule, r.second_put);
  CHECK(std::count(deps.begin(), deps.end(), r.first_reduce) == 0);
  CHECK_FALSE(notifies(r.schedule, r.first_reduce, 0));
}

TEST_CASE("a schedule that reuses a scratch slot passes the verifier") {
  const ScratchReuse r = scratch_reuse_schedule();
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const VerifyReport report = verify_allreduce(r.schedule, {seed});
    CHECK_MESSAGE(report.ok, report.error);
    CHECK(report.steps_run == r.schedule.steps().size());
  }
}

TEST_CASE("the same schedule built without write-after-read edges is reported as a race") {
  const ScratchReuse r =
      scratch_reuse_schedule(BuilderTestAccess::builder("scratch_reuse", 2, 2, Hazards::skip_write_after_read));
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const VerifyReport report = verify_allreduce(r.schedule, {seed});
    CHECK_FALSE(report.ok);
    CHECK_MESSAGE(contains(report.error, "race"), report.error);
    CHECK(contains(report.error, "scratch_reuse P=2 count=2"));
  }
}

TEST_CASE("one notification per (source step, receiving rank); flags numbered per receiver") {
  Builder b("fan_out", 3, 1);
  b.copy_input_to_output();
  const StepId put = b.put(out(0, 0, 1), scratch(1, 0, 1));
  const StepId use_a = b.copy(scratch(1, 1, 1), scratch(1, 0, 1));
  const StepId use_b = b.copy(scratch(1, 2, 1), scratch(1, 0, 1));
  const StepId to_2 = b.put(out(0, 0, 1), scratch(2, 0, 1));
  b.copy(scratch(2, 1, 1), scratch(2, 0, 1));
  const Schedule s = std::move(b).finish();
  CHECK(deps_of(s, use_a) == std::vector<StepId>{put});
  CHECK(deps_of(s, use_b) == std::vector<StepId>{put});
  REQUIRE(s.notifications(put).size() == 1);
  CHECK(s.notifications(put)[0].target == 1);
  CHECK(s.notifications(put)[0].flag == 0);
  REQUIRE(s.notifications(to_2).size() == 1);
  CHECK(s.notifications(to_2)[0].target == 2);
  CHECK(s.notifications(to_2)[0].flag == 0);
  CHECK(s.flag_count(0) == 0);
  CHECK(s.flag_count(1) == 1);
  CHECK(s.flag_count(2) == 1);
}

TEST_CASE("scratch_elems is one past the highest scratch element a rank uses") {
  Builder b("scratch", 2, 3);
  b.copy_input_to_output();
  b.put(out(0, 0, 3), scratch(1, 5, 3));
  const Schedule s = std::move(b).finish();
  CHECK(s.scratch_elems(0) == 0);
  CHECK(s.scratch_elems(1) == 8);
  CHECK(s.max_scratch_elems() == 8);
}

TEST_CASE("steps over empty ranges are dropped") {
  Builder b("empty", 2, 4);
  CHECK(b.put(out(0, 1, 0), scratch(1, 0, 0)) == Builder::kNoStep);
  CHECK(b.copy(out(0, 1, 0), in(0, 1, 0)) == Builder::kNoStep);
  CHECK(b.reduce(out(0, 1, 0), in(0, 1, 0)) == Builder::kNoStep);
  CHECK(std::move(b).finish().steps().empty());
}

TEST_CASE("argument checks") {
  Builder b("bad", 2, 4);
  b.copy_input_to_output();
  CHECK_THROWS_AS(b.put(out(0, 0, 1), out(1, 0, 1)), std::logic_error);          // put to non-scratch
  CHECK_THROWS_AS(b.put(out(0, 0, 1), scratch(0, 0, 1)), std::logic_error);      // put to self
  CHECK_THROWS_AS(b.get(out(1, 0, 1), out(0, 0, 1)), std::logic_error);          // get from non-scratch
  CHECK_THROWS_AS(b.get(scratch(0, 0, 1), out(0, 0, 1)), std::logic_error);      // get from self
  CHECK_THROWS_AS(b.copy(out(0, 2, 3), in(0, 2, 3)), std::logic_error);          // range past count
  CHECK_THROWS_AS(b.copy(out(0, 0, 1), in(0, 4, 1)), std::logic_error);          // source past count
  CHECK_THROWS_AS(b.copy(in(0, 0, 1), out(0, 0, 1)), std::logic_error);          // writes input
  CHECK_THROWS_AS(b.reduce(in(0, 0, 1), out(0, 0, 1)), std::logic_error);        // writes input
  CHECK_THROWS_AS(b.reduce(out(0, 0, 1), out(1, 0, 1)), std::logic_error);       // reduce across ranks
  CHECK_THROWS_AS(b.copy(out(0, 0, 1), out(1, 0, 1)), std::logic_error);         // copy across ranks
  CHECK_THROWS_AS(b.copy(out(0, 0, 2), in(0, 0, 1)), std::logic_error);          // lengths differ
  CHECK_THROWS_AS(b.copy(out(0, 0, 2), in(0, 0, 0)), std::logic_error);          // empty source only
  CHECK_THROWS_AS(b.put(out(0, 0, 0), scratch(1, 0, 2)), std::logic_error);      // empty source only
  CHECK_THROWS_AS(b.put(out(0, 0, 1), scratch(2, 0, 1)), std::logic_error);      // no rank 2
  CHECK_THROWS_AS(b.copy(out(-1, 0, 1), in(-1, 0, 1)), std::logic_error);        // no rank -1
  CHECK_THROWS_AS(Builder("none", 0, 4), std::invalid_argument);
  CHECK_THROWS_AS(BuilderTestAccess::add_dependency(b, 0, 99), std::logic_error);
}

TEST_CASE("argument errors name the algorithm") {
  Builder b("named_algorithm", 2, 4);
  try {
    b.put(out(0, 0, 1), scratch(0, 0, 1));
    FAIL("put to self was accepted");
  } catch (const std::logic_error& e) {
    CHECK(contains(e.what(), "named_algorithm"));
  }
}

namespace {
// Rank 0 sends to rank 1 twice through scratch slot 0 of rank 1, as two
// composed phases would; with a new scratch region the second send lands
// above the first and needs no acknowledgement.
Schedule two_phases(bool new_region) {
  Builder b("two_phases", 2, 1);
  b.put(in(0, 0, 1), scratch(1, 0, 1));
  b.reduce(out(1, 0, 1), in(1, 0, 1), scratch(1, 0, 1));
  if (new_region) b.begin_scratch_region();
  b.put(out(1, 0, 1), scratch(0, 0, 1));
  b.copy(out(0, 0, 1), scratch(0, 0, 1));
  b.put(in(0, 0, 1), scratch(1, 0, 1));  // phase two reuses offset 0 of rank 1
  b.copy(scratch(1, 1, 1), scratch(1, 0, 1));
  return std::move(b).finish();
}
}  // namespace

TEST_CASE("begin_scratch_region moves later phases above earlier scratch") {
  const Schedule reused = two_phases(false);
  const Schedule fresh = two_phases(true);
  CHECK(reused.scratch_elems(1) == 2);
  CHECK(fresh.scratch_elems(1) > 2);
  // Reusing slot 0 of rank 1 costs a write-after-read acknowledgement to rank 0.
  CHECK(reused.flag_count(0) > fresh.flag_count(0));
}

TEST_CASE("input and output share hazards only where they may be one buffer (input not smaller)") {
  // Rank 0 reads its input, then writes output [0, 2) from scratch.
  auto build = [](Shape shape) {
    Builder b("alias", 1, 2, shape);
    const StepId read = b.copy(out(0, 2, 2), in(0, 0, 2));
    const StepId write = b.copy(out(0, 0, 2), scratch(0, 0, 2));
    const Schedule s = std::move(b).finish();
    return std::pair{deps_of(s, write), read};
  };
  SUBCASE("equal sizes (an in-place allreduce): the write waits for the input read") {
    const auto [deps, read] = build(Shape{4, 4});
    CHECK(deps == std::vector<StepId>{read});
  }
  SUBCASE("a reduce-scatter's shape (result at the start of the input's buffer): it waits too") {
    const auto [deps, read] = build(Shape{8, 4});
    CHECK(deps == std::vector<StepId>{read});
  }
  SUBCASE("an allgather's shape: its input is never its output's memory, so no false dependency") {
    const auto [deps, read] = build(Shape{2, 4});
    CHECK(deps.empty());
  }
}
