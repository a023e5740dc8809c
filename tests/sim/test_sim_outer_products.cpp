// Sim tier: sum of outer products (DSOP) for P in {1,2,3,4,5,8}: every
// algorithm and the model's choice against the oracle, calls in flight
// together, errors on the calling rank, and ranks that disagree on the shape.
#include <doctest/doctest.h>

#include "../common/outer_products_cases.hpp"
#include "sim_support.hpp"

using namespace earlybird;
using earlybird::testing::Failures;
using earlybird::testing::RankCheck;

namespace {

constexpr int kRanks[] = {1, 2, 3, 4, 5, 8};

}  // namespace

TEST_CASE("sum_outer_products: every algorithm, shape and type against the oracle") {
  for (int p : kRanks) {
    CAPTURE(p);
    SimWorld world(p);
    Failures failures;
    earlybird::testing::run_bounded(world, failures, "sum_outer_products", [&](int rank, Communicator& comm) {
      RankCheck check(failures, rank);
      earlybird::testing::check_outer_products(comm, check);
      earlybird::testing::check_outer_products_in_flight(comm, check);
    }, std::chrono::seconds(300));
    failures.report();
  }
}

TEST_CASE("sum_outer_products: errors name the call and the rank") {
  for (int p : kRanks) {
    CAPTURE(p);
    SimWorld world(p);
    Failures failures;
    earlybird::testing::run_bounded(world, failures, "sum_outer_products errors", [&](int rank, Communicator& comm) {
      RankCheck check(failures, rank);
      earlybird::testing::check_outer_products_errors(comm, check);
    });
    failures.report();
  }
}

TEST_CASE("sum_outer_products: ranks that disagree on the rows fail, never a wrong matrix") {
  for (int p : {2, 3, 5})
    for (auto algorithm : coll::outer_product_algorithms()) {
      CAPTURE(p);
      SimWorld world(p);  // broken afterwards: a world of its own
      Failures failures;
      earlybird::testing::run_bounded(world, failures, "sum_outer_products mismatch", [&](int rank, Communicator& comm) {
        RankCheck check(failures, rank);
        earlybird::testing::check_outer_products_mismatch(comm, check, std::string(coll::to_string(algorithm)));
      });
      failures.report();
    }
}
