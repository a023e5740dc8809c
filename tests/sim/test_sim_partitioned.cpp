// Sim tier: partitioned allreduce for P in {1,2,3,4,5,8}: parts of equal and
// unequal (and empty) lengths, readied in random orders from several
// threads, with immediate collectives before and after; ready() errors; a
// handle dropped before every part was ready.
#include <doctest/doctest.h>

#include "../common/partitioned_cases.hpp"
#include "sim_support.hpp"

using namespace earlybird;
using earlybird::testing::Failures;
using earlybird::testing::RankCheck;

namespace {

constexpr int kRanks[] = {1, 2, 3, 4, 5, 8};

}  // namespace

TEST_CASE("partitioned allreduce: parts readied in random orders from several threads") {
  const std::vector<std::vector<std::size_t>> layouts = {
      {1}, {0}, Communicator::equal_parts(1000, 7), {0, 5, 3001, 1, 0, 40000}, Communicator::equal_parts(200000, 4)};
  for (int p : kRanks) {
    CAPTURE(p);
    SimWorld world(p);
    Failures failures;
    for (unsigned seed = 1; seed <= 3; ++seed)
      for (const auto& counts : layouts)
        earlybird::testing::run_bounded(world, failures, "partitioned", [&](int rank, Communicator& comm) {
          RankCheck check(failures, rank);
          earlybird::testing::check_partitioned(comm, check, counts, seed);
        });
    failures.report();
  }
}

TEST_CASE("partitioned allreduce: ready() out of range or twice, parts that do not add up") {
  for (int p : kRanks) {
    CAPTURE(p);
    SimWorld world(p);
    Failures failures;
    earlybird::testing::run_bounded(world, failures, "partitioned errors", [&](int rank, Communicator& comm) {
      RankCheck check(failures, rank);
      earlybird::testing::check_partitioned_errors(comm, check);
    });
    failures.report();
  }
}

TEST_CASE("partitioned allreduce: dropped before every part was ready") {
  for (int p : kRanks) {
    CAPTURE(p);
    SimWorld world(p);  // broken afterwards: a world of its own
    Failures failures;
    earlybird::testing::run_bounded(world, failures, "partitioned dropped", [&](int rank, Communicator& comm) {
      RankCheck check(failures, rank);
      earlybird::testing::check_partitioned_dropped(comm, check);
    });
    failures.report();
  }
}
