// eb-bench: earlybird's benchmark binary. Run under mpirun:
//   mpirun -np 4 eb-bench sweep   [--collective allreduce|reduce|bcast|allgather|reduce_scatter]
//                                 [--sizes 8:16M] [--algorithms auto,ring,...|all|none]
//                                 [--mpi-algorithms all|1,4,...] [--csv FILE]
//   mpirun -np 2 eb-bench overlap [--sizes 64K,1M] [--algorithm ring] [--csv FILE]
//   mpirun -np 4 eb-bench pap     [--modes one-late,rand-late] [--delays 0,1,5,10,50,100,500,1000]
//                                 [--sizes 1M] [--algorithms all|ring,mpi,...] [--iters 5] [--csv FILE]
#include "jobs.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>

namespace {

void usage() {
  std::fprintf(stderr,
               "usage: mpirun -np P eb-bench <job> [options]\n"
               "jobs:\n"
               "  sweep    latency per size and algorithm vs the MPI library's collective\n"
               "           --collective allreduce|reduce|bcast|allgather|reduce_scatter\n"
               "           --sizes 8:16M | 1K,1M   --algorithms auto,ring,... | all | none\n"
               "           --mpi-algorithms all | 1,4,ring,...  (Open MPI coll_tuned, each forced)\n"
               "           --segment BYTES  --fanout K  --budget SECONDS_PER_CONFIG  --csv FILE\n"
               "  overlap  IMB-NBC overlap of future+compute+wait vs MPI_Iallreduce\n"
               "           --sizes 64K,1M  --algorithm NAME  --iters N  --csv FILE\n"
               "  pap      arrival-pattern allreduce (Proficz 2018): mean time over ranks, speedup over ring,\n"
               "           share of the possible saving captured\n"
               "           --modes one-late,rand-late  --delays 0,1,5,10,50,100,500,1000 (ms)\n"
               "           --sizes 1M (floats, K/M suffixes)  --algorithms all | ring,rabenseifner,...,mpi\n"
               "           --iters N  --baseline-iters N  --seed S  --csv FILE\n");
}

// Open MPI's coll_tuned honours a forced algorithm only with dynamic rules on,
// a variable it reads at MPI_Init and does not let MPI_T change (mpi_tuned.hpp).
void enable_tuned_forcing_if_asked(int argc, char** argv) {
  for (int i = 2; i < argc; ++i)
    if (!std::strcmp(argv[i], "--mpi-algorithms")) setenv("OMPI_MCA_coll_tuned_use_dynamic_rules", "1", 0);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    usage();
    return argc < 2 ? 1 : 0;
  }
  int code = 1;
  enable_tuned_forcing_if_asked(argc, argv);
  try {
    earlybird::Runtime runtime(&argc, &argv);
    earlybird::Communicator world = runtime.world();
    const earlybird::bench::Args args(argc, argv, 2);
    const std::string job = argv[1];
    if (job == "sweep")
      code = earlybird::bench::run_sweep(world, args);
    else if (job == "overlap")
      code = earlybird::bench::run_overlap(world, args);
    else if (job == "pap")
      code = earlybird::bench::run_pap(world, args);
    else
      usage();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "eb-bench: %s\n", e.what());
    return 1;
  }
  return code;
}
