// MPI tier: sum of outer products (DSOP) on the world communicator — the
// cases of tests/common/outer_products_cases.hpp (ranks that disagree on the
// shape on a split of their own, which they leave broken).
#include "../common/outer_products_cases.hpp"
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
    earlybird::testing::check_outer_products(world, check);
    earlybird::testing::check_outer_products_in_flight(world, check);
    earlybird::testing::check_outer_products_errors(world, check);
    if (world.size() > 1) {
      Communicator own = world.split(0, world.rank());
      earlybird::testing::check_outer_products_mismatch(own, check, "generalized_rabenseifner");
    }
    code = check.finish("test_mpi_outer_products");
  }
  return code;
}
