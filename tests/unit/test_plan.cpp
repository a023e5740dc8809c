// Checks that project() turns a schedule into per-rank plans consistent with the schedule's dependencies and notifications.
#include "unit_support.hpp"

#include <earlybird/collectives/allreduce.hpp>
#include <earlybird/collectives/plan.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

using namespace earlybird::coll;
using namespace earlybird::coll::test;

namespace {

std::vector<StepId> steps_of(const Schedule& s, int rank) {
  std::vector<StepId> out;
  for (StepId id = 0; id < s.steps().size(); ++id)
    if (s.steps()[id].owner == rank) out.push_back(id);
  return out;
}

void check_step_matches(const PlanStep& p, const Step& s) {
  CHECK(p.kind == s.kind);
  CHECK(p.peer == s.peer());
  CHECK(p.src_buffer == s.src.buffer);
  CHECK(p.dst_buffer == s.dst.buffer);
  CHECK(p.src == s.src.range);
  CHECK(p.dst == s.dst.range);
}

// Per local step: how often it appears as a local successor and in release lists.
struct Incoming {
  std::vector<std::size_t> local, remote;
};

Incoming incoming(const RankPlan& plan) {
  Incoming in{std::vector<std::size_t>(plan.steps.size(), 0), std::vector<std::size_t>(plan.steps.size(), 0)};
  for (std::size_t i = 0; i < plan.steps.size(); ++i)
    for (std::uint32_t k = plan.steps[i].succ_begin; k < plan.steps[i].succ_end; ++k) {
      const std::uint32_t succ = plan.successors[k];
      REQUIRE(succ < plan.steps.size());
      CHECK(succ > i);  // program order
      ++in.local[succ];
    }
  for (std::uint32_t released : plan.release) {
    REQUIRE(released < plan.steps.size());
    ++in.remote[released];
  }
  return in;
}

void check_flags(const Schedule& s, const RankPlan& plan, int rank) {
  CHECK(plan.flags == s.flag_count(rank));
  REQUIRE(plan.release_begin.size() == plan.flags + 1);
  CHECK(plan.release_begin.front() == 0);
  CHECK(plan.release_begin.back() == plan.release.size());
  CHECK(std::is_sorted(plan.release_begin.begin(), plan.release_begin.end()));
  for (std::uint32_t f = 0; f < plan.flags; ++f)
    CHECK_MESSAGE(plan.release_begin[f] < plan.release_begin[f + 1], "flag " << f << " releases nothing");
  REQUIRE(plan.flag_source.size() == plan.flags);
}

void check_rank(const Schedule& s, int rank) {
  CAPTURE(rank);
  const RankPlan plan = project(s, rank);
  CHECK(plan.algorithm == s.algorithm());
  CHECK(plan.rank == rank);
  CHECK(plan.ranks == s.ranks());
  CHECK(plan.count == s.count());
  CHECK(plan.scratch_elems == s.scratch_elems(rank));
  CHECK(plan.max_scratch_elems == s.max_scratch_elems());
  CHECK(plan.max_flags == s.max_flag_count());
  check_flags(s, plan, rank);

  const std::vector<StepId> mine = steps_of(s, rank);
  REQUIRE(plan.steps.size() == mine.size());
  const Incoming in = incoming(plan);
  std::size_t total_waits = 0, total_deps = 0;
  for (std::size_t i = 0; i < mine.size(); ++i) {
    const StepId g = mine[i];
    const PlanStep& p = plan.steps[i];
    check_step_matches(p, s.steps()[g]);
    std::size_t local = 0, remote = 0;
    for (StepId d : s.deps(g)) (s.steps()[d].owner == rank ? local : remote)++;
    CHECK(p.waits == local + remote);
    CHECK(in.local[i] == local);
    CHECK(in.remote[i] == remote);  // release lists cover exactly the steps with remote deps
    total_waits += p.waits;
    total_deps += s.deps(g).size();

    const auto notes = s.notifications(g);
    REQUIRE(p.note_end - p.note_begin == notes.size());
    for (std::size_t k = 0; k < notes.size(); ++k) {
      const Notification& n = plan.notes[p.note_begin + k];
      CHECK(n.target == notes[k].target);
      CHECK(n.flag == notes[k].flag);
      CHECK(n.target != rank);
      CHECK(n.flag < s.flag_count(n.target));
    }
  }
  CHECK(total_waits == total_deps);
  CHECK(plan.notes.size() == [&] {
    std::size_t n = 0;
    for (StepId g : mine) n += s.notifications(g).size();
    return n;
  }());
}

// Across all ranks every flag of every receiver is raised by exactly one
// notification, and the receiver names the right source rank.
void check_flag_raised_once(const Schedule& s) {
  std::vector<std::vector<int>> raised_by(static_cast<std::size_t>(s.ranks()));
  for (int r = 0; r < s.ranks(); ++r) raised_by[r].assign(s.flag_count(r), -1);
  for (StepId g = 0; g < s.steps().size(); ++g)
    for (const Notification& n : s.notifications(g)) {
      int& source = raised_by[n.target][n.flag];
      CHECK(source == -1);
      source = s.steps()[g].owner;
    }
  for (int r = 0; r < s.ranks(); ++r) {
    const RankPlan plan = project(s, r);
    CHECK(plan.flag_source == raised_by[r]);
  }
}

void check_schedule(const Schedule& s) {
  CAPTURE(s.algorithm());
  CAPTURE(s.ranks());
  CAPTURE(s.count());
  for (int r = 0; r < s.ranks(); ++r) check_rank(s, r);
  check_flag_raised_once(s);
}

}  // namespace

TEST_CASE("plans of the catalogue's algorithms are consistent with their schedules") {
  for (const Algorithm& algorithm : allreduce_algorithms())
    for (int p : {1, 2, 3, 4, 5, 8, 13})
      for (std::size_t count : {0u, 1u, 7u, 100u}) check_schedule(algorithm.make(p, count, {}, 4));
}

TEST_CASE("plans of a pipelined ring (several segments per chunk)") {
  check_schedule(allreduce_segmented_ring(5, 103, 4));
}

TEST_CASE("plans of a schedule with acknowledgement flags (scratch reuse)") {
  const ScratchReuse r = scratch_reuse_schedule();
  check_schedule(r.schedule);
  // The second put on rank 0 waits for rank 1's first reduce: one flag.
  const RankPlan plan0 = project(r.schedule, 0);
  const PlanStep& second_put = plan0.steps[2];
  CHECK(second_put.kind == StepKind::put);
  CHECK(second_put.waits == 3);  // copy (read-after-write), first put (write-after-write), the ack
}

TEST_CASE("a rank with no steps gets an empty plan") {
  const RankPlan plan = project(allreduce_ring(4, 0), 2);
  CHECK(plan.steps.empty());
  CHECK(plan.flags == 0);
  CHECK(plan.release_begin == std::vector<std::uint32_t>{0});
}
