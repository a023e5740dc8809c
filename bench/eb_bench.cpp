// eb-bench: earlybird's benchmark binary, one subcommand per job
// (docs/benchmarks.md). Run under mpirun:
//   mpirun -np 4 eb-bench sweep   --collective allreduce --sizes 8:16M --algorithms all --mpi-algorithms all
//   mpirun -np 2 eb-bench overlap --sizes 64K,1M --algorithm ring
//   mpirun -np 4 eb-bench pap     --modes one-late,rand-late --sizes 4M --algorithms all
//   mpirun -np 2 eb-bench warmup  --sizes 8,1M --communicators 8
//   mpirun -np 2 eb-bench dsop    --dims 1000,2000,4000,8000
//   eb-bench simulate --algorithm ring --ranks 64 --bytes 1M   (no MPI, no mpirun)
//   eb-bench suara    --ranks 64,1024,16384 --sizes 8,64K,64M  (no MPI, no mpirun)
//   eb-bench plans    --ranks 1024,16384 --algorithms ring,rabenseifner  (no MPI, no mpirun)
// `eb-bench --help` and `eb-bench <job> --help` list the options and their
// defaults; every --sizes is in bytes. The command line is parsed before MPI
// starts (cli.hpp).
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "cli.hpp"
#include "jobs.hpp"

namespace earlybird::bench {
namespace {

// Open MPI's coll_tuned honours a forced algorithm only with dynamic rules on,
// a variable it reads at MPI_Init and does not let MPI_T change (mpi_tuned.hpp).
void enable_tuned_forcing_if_asked(const JobRequest& job) {
  const auto* sweep = std::get_if<SweepOptions>(&job);
  if (sweep && !sweep->mpi_algorithms.empty()) setenv("OMPI_MCA_coll_tuned_use_dynamic_rules", "1", 0);
}

int run(Communicator& world, const JobRequest& job) {
  if (const auto* sweep = std::get_if<SweepOptions>(&job)) return run_sweep(world, *sweep);
  if (const auto* overlap = std::get_if<OverlapOptions>(&job)) return run_overlap(world, *overlap);
  if (const auto* warmup = std::get_if<WarmupOptions>(&job)) return run_warmup(world, *warmup);
  if (const auto* calibrate = std::get_if<CalibrateOptions>(&job)) return run_calibrate(world, *calibrate);
  if (const auto* dsop = std::get_if<DsopOptions>(&job)) return run_dsop(world, *dsop);
  return run_pap(world, std::get<PapOptions>(job));
}

}  // namespace
}  // namespace earlybird::bench

int main(int argc, char** argv) {
  const earlybird::bench::CommandLine command = earlybird::bench::parse_command_line(argc, argv);
  if (!command.job) return command.exit_code;
  earlybird::bench::enable_tuned_forcing_if_asked(*command.job);
  try {
    if (const auto* simulate = std::get_if<earlybird::bench::SimulateOptions>(&*command.job))
      return earlybird::bench::run_simulate(*simulate);
    if (const auto* suara = std::get_if<earlybird::bench::SuaraTableOptions>(&*command.job))
      return earlybird::bench::run_suara_table(*suara);
    if (const auto* plans = std::get_if<earlybird::bench::PlanBuildOptions>(&*command.job))
      return earlybird::bench::run_plan_build(*plans);
    earlybird::Runtime runtime(&argc, &argv);
    earlybird::Communicator world = runtime.world();
    return earlybird::bench::run(world, *command.job);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "eb-bench: %s\n", e.what());
    return 1;
  }
}
