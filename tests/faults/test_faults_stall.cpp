// Faults tier (sim): a rank that stops calling. For every collective and
// every algorithm of its catalogue (the arrival-ordered ones included), the
// last rank does not make the call; every other rank's Future must fail
// within the watchdog's timeout + 1 s, naming the missing rank; the
// communicator then refuses further calls with the first failure; and a
// fresh communicator (a new world) works.
#include <doctest/doctest.h>

#include "../common/oracle.hpp"
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

// Submits one call of `collective` with `algorithm` on `comm` (count 1000).
Future submit(Communicator& comm, Collective collective, const std::string& algorithm, std::vector<double>& in,
              std::vector<double>& out) {
  CollectiveOptions options;
  options.algorithm = algorithm;
  const std::size_t n = in.size();
  switch (collective) {
    case Collective::allreduce: return comm.allreduce(std::span<const double>(in), std::span<double>(out.data(), n), Op::sum, options);
    case Collective::reduce: return comm.reduce(std::span<const double>(in), std::span<double>(out.data(), n), Op::sum, 0, options);
    case Collective::bcast: return comm.bcast(std::span<double>(in), 0, options);
    case Collective::allgather: return comm.allgather(std::span<const double>(in), std::span<double>(out), options);
    case Collective::reduce_scatter:
      return comm.reduce_scatter(std::span<const double>(out), std::span<double>(in), Op::sum, options);
  }
  return {};
}

std::string stall_case(int p, Collective collective, const std::string& algorithm) {
  SimOptions options;
  options.timeout = kTimeout;
  SimWorld world(p, options);
  Failures failures;
  const std::string what = std::string(coll::to_string(collective)) + " " + algorithm + " P=" + std::to_string(p);
  const int missing = p - 1;
  earlybird::testing::run_bounded(world, failures, what, [&](int rank, Communicator& comm) {
    if (rank == missing) return;  // stops calling
    std::vector<double> in(1000, 1.0), out(1000 * static_cast<std::size_t>(p), 0.0);
    const auto start = std::chrono::steady_clock::now();
    const Future f = submit(comm, collective, algorithm, in, out);
    std::string error;
    try {
      if (!f.wait_for(kTimeout + std::chrono::seconds(1)))
        error = "HANG";
    } catch (const std::exception& e) {
      error = e.what();
    }
    const auto took = std::chrono::steady_clock::now() - start;
    if (error.empty()) return;  // a root-less rank may finish without the missing one (bcast from 0, reduce to 0's peers)
    if (error == "HANG" || took > kTimeout + std::chrono::seconds(1))
      return failures.add(what + ": rank " + std::to_string(rank) + " not failed within the timeout + 1 s");
    if (error.find("rank " + std::to_string(missing)) == std::string::npos)
      failures.add(what + ": rank " + std::to_string(rank) + "'s error does not name rank " + std::to_string(missing) + ": " + error);
    std::vector<double> again(3, 1.0);
    std::string refused;
    try {
      comm.allreduce(std::span<double>(again), Op::sum).wait_for(std::chrono::seconds(5));
    } catch (const std::exception& e) {
      refused = e.what();
    }
    if (refused.find("earlier collective") == std::string::npos)
      failures.add(what + ": rank " + std::to_string(rank) + ": the communicator did not refuse the next call: " + refused);
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
