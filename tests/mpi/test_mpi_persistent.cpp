// MPI tier: persistent collectives (allreduce_init, reduce_init, bcast_init)
// on the world communicator — the cases of tests/common/persistent_cases.hpp.
#include "../common/persistent_cases.hpp"
#include "mpi_check.hpp"

#include <earlybird/earlybird.hpp>

#include <mpi.h>

using namespace earlybird;
using earlybird::testing::MpiCheck;

namespace {

// Rank 0 opens the gate with a message to every other rank.
class MpiGate {
 public:
  void open() {
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int token = 1;
    for (int r = 1; r < size; ++r) MPI_Send(&token, 1, MPI_INT, r, kTag, MPI_COMM_WORLD);
  }
  void pass() {
    int token = 0;
    MPI_Recv(&token, 1, MPI_INT, 0, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }

 private:
  static constexpr int kTag = 4711;
};

}  // namespace

int main(int argc, char** argv) {
  int code = 1;
  {
    Runtime runtime(&argc, &argv);
    Communicator world = runtime.world();
    MpiCheck check(world.rank());
    for (std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{3001}, std::size_t{300000}})
      earlybird::testing::check_persistent_starts(world, check, count);
    MpiGate gate;
    earlybird::testing::check_started_twice(world, check, gate);
    earlybird::testing::check_invalid_persistent(world, check);
    code = check.finish("test_mpi_persistent");
  }
  return code;
}
