// MPI tier: Communicator::tune under mpirun (ctest runs it on the default
// transport and on p2p): every collective tuned at several sizes with one
// report on every rank and exact `auto` calls after it, on the world and on
// a split in reverse order; a pin decides `auto` for its class only; bad
// requests refused, naming the rank and the cause. Under EARLYBIRD_TUNE,
// the first `auto` call of each class tunes it instead. MPI is initialised here,
// so it outlives the Runtime.
#include "../common/tune_cases.hpp"
#include "mpi_check.hpp"

#include <earlybird/earlybird.hpp>

#include <mpi.h>

#include <cstdlib>
#include <string>

using namespace earlybird;
using earlybird::testing::JobDeadline;
using earlybird::testing::MpiCheck;

namespace {

void check_tune(Communicator& comm, MpiCheck& check) {
  if (std::getenv("EARLYBIRD_TUNE")) {  // tuning on first use instead (CMakeLists.txt)
    earlybird::testing::check_tune_on_first_use(comm, check);
    return;
  }
  for (std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{300}, std::size_t{70000}})
    earlybird::testing::check_tune_each_collective(comm, check, count);
  earlybird::testing::check_tune_pins_the_class(comm, check);
  earlybird::testing::check_tune_refuses_bad_input(comm, check);
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  // As Runtime does when it initialises MPI (docs/design.md).
  setenv("OMPI_MCA_osc_rdma_priority", "1", 0);
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int code = 1;
  {
    JobDeadline deadline(rank, std::chrono::seconds(300));
    MpiCheck check(rank);
    {
      Runtime runtime(&argc, &argv);
      Communicator world = runtime.world();
      check_tune(world, check);
      Communicator reversed = world.split(0, -world.rank());
      check_tune(reversed, check);
    }
    code = check.finish("test_mpi_tune");
  }
  MPI_Finalize();
  return code;
}
