// MPI tier: partitioned allreduce on the world communicator — the cases of
// tests/common/partitioned_cases.hpp (the dropped handle on a split of its
// own, which it leaves broken).
#include "../common/partitioned_cases.hpp"
#include "mpi_check.hpp"

#include <earlybird/earlybird.hpp>

using namespace earlybird;
using earlybird::testing::MpiCheck;

int main(int argc, char** argv) {
  int code = 1;
  {
    Runtime runtime(&argc, &argv);
    Communicator world = runtime.world();
    MpiCheck check(world.rank());
    const std::vector<std::vector<std::size_t>> layouts = {
        {1}, {0}, Communicator::equal_parts(1000, 7), {0, 5, 3001, 1, 0, 40000}, Communicator::equal_parts(400000, 4)};
    for (unsigned seed = 1; seed <= 2; ++seed)
      for (const auto& counts : layouts) earlybird::testing::check_partitioned(world, check, counts, seed);
    earlybird::testing::check_partitioned_errors(world, check);
    {
      Communicator own = world.split(0, world.rank());
      earlybird::testing::check_partitioned_dropped(own, check);
    }
    code = check.finish("test_mpi_partitioned");
  }
  return code;
}
