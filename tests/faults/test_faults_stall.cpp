// Faults tier (sim): a rank that stops calling. For every collective and
// every algorithm of its catalogue (the arrival-ordered ones included), the
// last rank does not make the call; every other rank's Future must fail
// within the watchdog's timeout + 1 s, naming the missing rank; the
// communicator then refuses further calls with the first failure; and a
// fresh communicator (a new world) works.
#include <doctest/doctest.h>

#include "../common/stall_cases.hpp"
#include "../sim/sim_support.hpp"

#include <earlybird/collectives/catalogue.hpp>

#include <chrono>
#include <string>
#include <vector>

using namespace earlybird;
using coll::Collective;
using earlybird::testing::Failures;

namespace {

constexpr auto kTimeout = std::chrono::milliseconds(300);

// A fresh world per case: the failure leaves the communicator refusing calls.
std::string stall_case(int p, Collective collective, const std::string& algorithm) {
  SimOptions options;
  options.timeout = kTimeout;
  SimWorld world(p, options);
  Failures failures;
  const int missing = p - 1;
  earlybird::testing::run_bounded(world, failures, algorithm, [&](int rank, Communicator& comm) {
    if (rank == missing) return;  // stops calling
    earlybird::testing::RankCheck check(failures, rank);
    earlybird::testing::check_stalled_call(comm, check, collective, algorithm, missing, kTimeout);
  });
  std::string all;
  for (const auto& f : failures.list) all += f + "\n";
  return all;
}

}  // namespace

TEST_CASE("a rank that stops calling: the others fail within the timeout + 1 s, naming it") {
  for (int p : {2, 3, 4}) {
    for (Collective collective : {Collective::allreduce, Collective::reduce, Collective::bcast, Collective::allgather,
                                  Collective::reduce_scatter})
      for (const auto& algorithm : coll::algorithms(collective)) {
        const std::string problems = stall_case(p, collective, std::string(algorithm.name));
        CHECK_MESSAGE(problems.empty(), problems);
      }
    // A fresh world after all that works.
    SimWorld fresh(p);
    Failures failures;
    earlybird::testing::run_bounded(fresh, failures, "fresh world", [&](int rank, Communicator& comm) {
      std::vector<double> v(10, 1.0);
      earlybird::testing::wait_bounded(comm.allreduce(std::span<double>(v), Op::sum), rank, "fresh allreduce");
      if (v != std::vector<double>(10, p)) failures.add("fresh world: wrong result");
    });
    failures.report();
  }
}
