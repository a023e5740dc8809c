// MPI tier: Communicator::warm_up() completes on the world, on an adopted
// communicator and on split ones (whichever transport EARLYBIRD_TRANSPORT
// gives them: ctest runs this program on the default and on p2p), a
// collective after it is exact, and warm_up on a communicator the Runtime has
// closed fails at once with an error naming the operation, the rank and the
// cause. MPI is initialised here, so it outlives the Runtime.
#include "../common/oracle.hpp"
#include "mpi_check.hpp"

#include <earlybird/earlybird.hpp>

#include <mpi.h>

#include <cstdlib>

#include <string>
#include <vector>

using namespace earlybird;
using earlybird::testing::count_wrong;
using earlybird::testing::JobDeadline;
using earlybird::testing::make_input;
using earlybird::testing::MpiCheck;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// warm_up, then an exact allreduce, on `comm`.
void check_warm_up(Communicator& comm, const std::string& name, MpiCheck& check) {
  check.wait(comm.warm_up(), "warm_up on " + name);
  std::vector<float> v = make_input<float>(comm.rank(), 3000, Op::sum);
  check.wait(comm.allreduce(std::span<float>(v), Op::sum), "allreduce after warm_up on " + name);
  check.expect(count_wrong(v, comm.size(), Op::sum) == 0, "allreduce after warm_up on " + name + " is exact");
}

void check_closed(Communicator& closed, int rank, MpiCheck& check) {
  const std::string e = check.error_of(closed.warm_up(), "warm_up on a closed communicator");
  check.expect(contains(e, "warm_up") && contains(e, "rank " + std::to_string(rank)) && contains(e, "closed"),
               "warm_up on a closed communicator names the operation, the rank and the cause: '" + e + "'");
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  // As Runtime does when it initialises MPI (docs/design.md): osc/sm on one
  // node. osc/rdma's shared-memory segments fail to unlink at finalize here.
  setenv("OMPI_MCA_osc_rdma_priority", "1", 0);
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int code = 1;
  {
    JobDeadline deadline(rank, std::chrono::seconds(300));
    MpiCheck check(rank);
    Communicator kept;
    {
      Runtime runtime(&argc, &argv);
      Communicator world = runtime.world();
      check_warm_up(world, "the world", check);
      check_warm_up(world, "the world (again)", check);
      Communicator whole = world.split(0, -world.rank());
      check_warm_up(whole, "a split in reverse order", check);
      Communicator halves = world.split(world.rank() % 2, world.rank());
      check_warm_up(halves, "a split in halves", check);
      kept = runtime.adopt(MPI_COMM_WORLD);
      check_warm_up(kept, "an adopted communicator", check);
    }  // the Runtime closes `kept`
    check_closed(kept, rank, check);
    code = check.finish("test_mpi_warmup");
  }
  MPI_Finalize();
  return code;
}
