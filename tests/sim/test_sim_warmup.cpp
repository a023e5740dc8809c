// Sim tier: Communicator::warm_up() completes on every rank at P = 1..5, on
// its own and between collectives in flight, and the collectives around it
// stay exact; a default-constructed communicator's warm_up fails with a
// message.
#include <doctest/doctest.h>

#include "../common/oracle.hpp"
#include "sim_support.hpp"

#include <earlybird/sim.hpp>

#include <string>
#include <vector>

using namespace earlybird;
using earlybird::testing::count_wrong;
using earlybird::testing::Failures;
using earlybird::testing::make_input;
using earlybird::testing::run_bounded;
using earlybird::testing::wait_bounded;

namespace {

constexpr std::size_t kCount = 1000;

// An allreduce of `algorithm` ("" : auto) started now, and its check.
struct Exact {
  std::vector<float> data;
  Future future;
  Exact(Communicator& comm, int rank, const std::string& algorithm) : data(make_input<float>(rank, kCount, Op::sum)) {
    CollectiveOptions options;
    options.algorithm = algorithm;
    future = comm.allreduce(std::span<float>(data), Op::sum, options);
  }
  void check(int rank, int ranks, const std::string& what, Failures& failures) {
    wait_bounded(future, rank, what);
    if (const std::size_t wrong = count_wrong(data, ranks, Op::sum))
      failures.add(what + ": rank " + std::to_string(rank) + " has " + std::to_string(wrong) + " wrong elements");
  }
};

}  // namespace

TEST_CASE("warm_up completes on every rank, then a collective is exact, P = 1..5") {
  Failures failures;
  for (int ranks = 1; ranks <= 5; ++ranks) {
    SimWorld world(ranks);
    const std::string what = "warm_up then allreduce, P=" + std::to_string(ranks);
    run_bounded(world, failures, what, [&](int rank, Communicator& comm) {
      wait_bounded(comm.warm_up(), rank, what + " (warm_up)");
      for (const char* algorithm : {"", "ring", "recursive_doubling"}) {
        Exact after(comm, rank, algorithm);
        after.check(rank, ranks, what + " (" + algorithm + ")", failures);
      }
    });
  }
  failures.report();
}

TEST_CASE("warm_up between collectives in flight, and twice, P = 2..5") {
  Failures failures;
  for (int ranks = 2; ranks <= 5; ++ranks) {
    SimWorld world(ranks);
    const std::string what = "allreduce, warm_up, allreduce, warm_up, P=" + std::to_string(ranks);
    run_bounded(world, failures, what, [&](int rank, Communicator& comm) {
      Exact before(comm, rank, "ring");
      Future first = comm.warm_up();
      Exact after(comm, rank, "rabenseifner");
      Future second = comm.warm_up();
      wait_bounded(first, rank, what + " (first warm_up)");
      wait_bounded(second, rank, what + " (second warm_up)");
      before.check(rank, ranks, what + " (before)", failures);
      after.check(rank, ranks, what + " (after)", failures);
    });
  }
  failures.report();
}

TEST_CASE("warm_up on a default-constructed communicator fails with a message") {
  Communicator none;
  std::string error;
  try {
    none.warm_up().wait();
  } catch (const Error& e) {
    error = e.what();
  }
  CHECK(error.find("warm_up") != std::string::npos);
  CHECK(error.find("invalid") != std::string::npos);
}
