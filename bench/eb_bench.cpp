// eb-bench: earlybird's benchmark binary. Run under mpirun:
//   mpirun -np 4 eb-bench sweep   [--sizes 8:16M] [--algorithms auto,ring,...|all] [--csv FILE]
//   mpirun -np 2 eb-bench overlap [--sizes 64K,1M] [--algorithm ring] [--csv FILE]
#include "jobs.hpp"

#include <cstdio>
#include <cstring>
#include <exception>

namespace {

void usage() {
  std::fprintf(stderr,
               "usage: mpirun -np P eb-bench <job> [options]\n"
               "jobs:\n"
               "  sweep    latency per size and algorithm vs MPI_Allreduce\n"
               "           --sizes 8:16M | 1K,1M   --algorithms auto,ring,... | all\n"
               "           --segment BYTES  --budget SECONDS_PER_CONFIG  --csv FILE\n"
               "  overlap  IMB-NBC overlap of future+compute+wait vs MPI_Iallreduce\n"
               "           --sizes 64K,1M  --algorithm NAME  --iters N  --csv FILE\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    usage();
    return argc < 2 ? 1 : 0;
  }
  int code = 1;
  try {
    earlybird::Runtime runtime(&argc, &argv);
    earlybird::Communicator world = runtime.world();
    const earlybird::bench::Args args(argc, argv, 2);
    const std::string job = argv[1];
    if (job == "sweep")
      code = earlybird::bench::run_sweep(world, args);
    else if (job == "overlap")
      code = earlybird::bench::run_overlap(world, args);
    else
      usage();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "eb-bench: %s\n", e.what());
    return 1;
  }
  return code;
}
