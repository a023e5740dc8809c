// Sim tier: persistent collectives (allreduce_init, reduce_init, bcast_init)
// for P in {1,2,3,4,5,8}: many starts with new contents against the oracle,
// interleaved with immediate calls; a second start before the first
// completed; calls that cannot run.
#include <doctest/doctest.h>

#include "../common/persistent_cases.hpp"
#include "sim_support.hpp"

using namespace earlybird;
using earlybird::testing::Failures;
using earlybird::testing::Gate;
using earlybird::testing::RankCheck;

namespace {

constexpr int kRanks[] = {1, 2, 3, 4, 5, 8};

}  // namespace

TEST_CASE("persistent collectives: many starts against the oracle, interleaved with immediate calls") {
  for (int p : kRanks) {
    CAPTURE(p);
    SimWorld world(p);
    Failures failures;
    // 100000 doubles: several batches of the 1 MiB lane.
    for (std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{3001}, std::size_t{100000}})
      earlybird::testing::run_bounded(world, failures, "persistent starts", [&](int rank, Communicator& comm) {
        RankCheck check(failures, rank);
        earlybird::testing::check_persistent_starts(comm, check, count);
      });
    failures.report();
  }
}

TEST_CASE("persistent collectives: a second start before the first completed fails alone") {
  for (int p : kRanks) {
    CAPTURE(p);
    SimWorld world(p);
    Failures failures;
    Gate gate;
    earlybird::testing::run_bounded(world, failures, "started twice", [&](int rank, Communicator& comm) {
      RankCheck check(failures, rank);
      earlybird::testing::check_started_twice(comm, check, gate);
    });
    failures.report();
  }
}

TEST_CASE("persistent collectives: a call that cannot run fails every start") {
  for (int p : kRanks) {
    CAPTURE(p);
    SimWorld world(p);
    Failures failures;
    earlybird::testing::run_bounded(world, failures, "invalid persistent", [&](int rank, Communicator& comm) {
      RankCheck check(failures, rank);
      earlybird::testing::check_invalid_persistent(comm, check);
    });
    failures.report();
  }
}
