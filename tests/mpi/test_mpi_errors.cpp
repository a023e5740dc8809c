// MPI tier: bad input becomes a clear error through the future, never a hang
// or a wrong answer — mismatched counts across ranks, unknown algorithms,
// operators undefined for a type — and a failed communicator stays failed
// while a fresh one keeps working.
#include "../common/oracle.hpp"
#include "mpi_check.hpp"

#include <earlybird/earlybird.hpp>

#include <vector>

using namespace earlybird;
using earlybird::testing::count_wrong;
using earlybird::testing::make_input;
using earlybird::testing::MpiCheck;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

void check_argument_errors(Communicator& comm, MpiCheck& check) {
  std::vector<double> v(16, 1.0);
  CollectiveOptions unknown;
  unknown.algorithm = "bogus";
  const std::string e1 = check.error_of(comm.allreduce(std::span<double>(v), Op::sum, unknown), "unknown algorithm");
  check.expect(contains(e1, "unknown algorithm") && contains(e1, "rank " + std::to_string(comm.rank())),
               "unknown algorithm reported with the rank: '" + e1 + "'");
  const std::string e2 = check.error_of(comm.allreduce(std::span<double>(v), Op::band), "band on float64");
  check.expect(contains(e2, "band") && contains(e2, "float64"), "band on doubles rejected: '" + e2 + "'");
}

void check_mismatch(Runtime& runtime, MpiCheck& check) {
  if (runtime.world().size() < 2) return;
  Communicator comm = runtime.adopt(MPI_COMM_WORLD);
  std::vector<std::int32_t> v(comm.rank() == 1 ? 150 : 100, 1);
  CollectiveOptions ring;
  ring.algorithm = "ring";
  const std::string e = check.error_of(comm.allreduce(std::span<std::int32_t>(v), Op::sum, ring), "mismatched allreduce");
  check.expect(!e.empty(), "a mismatched allreduce must fail on every rank");
  check.expect(contains(e, "rank " + std::to_string(comm.rank())), "error names this rank: '" + e + "'");
  // The failed communicator refuses further work instead of corrupting it.
  std::vector<std::int32_t> w(10, 1);
  const std::string after = check.error_of(comm.allreduce(std::span<std::int32_t>(w), Op::sum), "allreduce after failure");
  check.expect(contains(after, "earlier collective"), "a broken communicator says why: '" + after + "'");
}

void check_still_working(Runtime& runtime, MpiCheck& check) {
  Communicator comm = runtime.world();
  std::vector<float> v = make_input<float>(comm.rank(), 5000, Op::sum);
  check.wait(comm.allreduce(std::span<float>(v), Op::sum), "allreduce on a healthy communicator");
  check.expect(count_wrong(v, comm.size(), Op::sum) == 0, "healthy communicator still exact");
}

}  // namespace

int main(int argc, char** argv) {
  int code = 1;
  {
    RuntimeOptions options;
    options.timeout = std::chrono::milliseconds(3000);
    Runtime runtime(&argc, &argv, options);
    Communicator world = runtime.world();
    MpiCheck check(world.rank());
    check_argument_errors(world, check);
    check_mismatch(runtime, check);
    check_still_working(runtime, check);
    code = check.finish("test_mpi_errors");
  }
  return code;
}
