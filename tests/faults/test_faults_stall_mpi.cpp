// Faults tier (MPI): a rank that stops calling, under mpirun. For every
// collective (earlybird's choice of algorithm) and every arrival-ordered
// allreduce, on a communicator split for the case, the last rank sleeps past
// the watchdog's timeout instead of calling; the others must fail within the
// timeout + 1 s naming it (tests/common/stall_cases.hpp). Afterwards the world
// communicator still works.
#include "../common/oracle.hpp"
#include "../common/stall_cases.hpp"
#include "../mpi/mpi_check.hpp"

#include <earlybird/collectives/catalogue.hpp>
#include <earlybird/earlybird.hpp>

#include <thread>

using namespace earlybird;
using coll::Collective;
using earlybird::testing::MpiCheck;

namespace {

constexpr auto kTimeout = std::chrono::milliseconds(500);

struct Case {
  Collective collective;
  std::string algorithm;  // empty: earlybird's choice
};

std::vector<Case> cases() {
  std::vector<Case> all;
  for (Collective c : {Collective::allreduce, Collective::reduce, Collective::bcast, Collective::allgather,
                       Collective::reduce_scatter})
    all.push_back({c, ""});
  for (const auto& a : coll::algorithms(Collective::allreduce))
    if (a.arrival != coll::ArrivalOrder::none) all.push_back({Collective::allreduce, std::string(a.name)});
  return all;
}

}  // namespace

int main(int argc, char** argv) {
  int code = 1;
  {
    RuntimeOptions options;
    options.timeout = kTimeout;
    Runtime runtime(&argc, &argv, options);
    Communicator world = runtime.world();
    MpiCheck check(world.rank());
    const int missing = world.size() - 1;
    if (world.size() > 1)
      for (const Case& c : cases()) {
        Communicator comm = world.split(0, world.rank());
        if (world.rank() == missing)
          std::this_thread::sleep_for(kTimeout + std::chrono::milliseconds(300));
        else
          earlybird::testing::check_stalled_call(comm, check, c.collective, c.algorithm, missing, kTimeout);
      }  // the split closes here (collective: the missing rank takes part)
    std::vector<float> v = earlybird::testing::make_input<float>(world.rank(), 5000, Op::sum);
    check.wait(world.allreduce(std::span<float>(v), Op::sum), "allreduce on the world after the stalls");
    check.expect(earlybird::testing::count_wrong(v, world.size(), Op::sum) == 0, "the world still exact");
    code = check.finish("test_faults_stall_mpi");
  }
  return code;
}
