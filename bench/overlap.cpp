// eb-bench overlap: how much of a nonblocking allreduce hides behind
// computation, measured as IMB-NBC does:
//   t_pure  start + wait, nothing in between;
//   t_cpu   the computation alone, sized to take about t_pure;
//   t_ovrl  start + computation + wait;
//   overlap = 100 max(0, min(1, (t_pure + t_cpu - t_ovrl) / min(t_pure, t_cpu))).
// earlybird (future + compute + wait) and MPI (MPI_Iallreduce + compute +
// MPI_Wait) are measured in the same run. The computation is a fixed amount of
// arithmetic, not a clock-driven spin, so time stolen from it shows up.
// Beside each overlap, the CPU time the collective cost while overlapped
// (the process's CPU seconds in an overlapped iteration minus those of a
// computation-only one): where the computation fills the CPUs a rank has, no
// overlap can exceed 1 - that / t_pure, however the transfers are driven.
// And what the library's threads cost a computation-only iteration, the
// communicator idle (a progress thread serving its transport).
#include <sys/resource.h>

#include <cstring>
#include <functional>

#include "bench_common.hpp"
#include "format.hpp"
#include "jobs.hpp"

namespace earlybird::bench {
namespace {

volatile double g_sink = 0;

// A dependent chain of multiply-adds: `units` steps of fixed work.
void compute(long long units) {
  double x = 1.0;
  for (long long i = 0; i < units; ++i) x = x * 1.0000001 + 1e-9;
  g_sink = x;
}

double units_per_second() {
  const long long units = 20'000'000;
  const double t0 = MPI_Wtime();
  compute(units);
  return static_cast<double>(units) / (MPI_Wtime() - t0);
}

// A nonblocking collective: start() begins it, finish() waits for it.
struct Nonblocking {
  std::function<void()> start;
  std::function<void()> finish;
};

struct Overlap {
  double t_pure = 0, t_cpu = 0, t_ovrl = 0, percent = 0;
  // CPU seconds (all of the process's threads, user + system) an overlapped
  // iteration used beyond a computation-only one, the largest over ranks:
  // what the collective took from a host whose CPUs the computation fills.
  double collective_cpu = 0;
  // CPU seconds the process's other threads (the library's) used during a
  // computation-only iteration, the collective idle: its cost to a program
  // that only computes. The largest over ranks.
  double idle_cpu = 0;
};

// CPU seconds used so far (user + system) by `who`: RUSAGE_SELF, the whole
// process, or RUSAGE_THREAD, the calling thread.
double cpu_seconds(int who) {
  rusage usage{};
  getrusage(who, &usage);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec); };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

// Mean CPU seconds per iteration: the process's, and its threads' but the caller's.
struct CpuPerIteration {
  double process = 0, other_threads = 0;
};

// The median over iterations of the slowest rank's time; `cpu` (if given)
// receives this rank's CPU use per iteration.
double median_max_time(int iterations, const std::function<void()>& body, CpuPerIteration* cpu = nullptr) {
  std::vector<double> t;
  double process = 0, caller = 0;
  for (int k = 0; k < iterations; ++k) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double p0 = cpu_seconds(RUSAGE_SELF), c0 = cpu_seconds(RUSAGE_THREAD);
    const double t0 = MPI_Wtime();
    body();
    t.push_back(MPI_Wtime() - t0);
    process += cpu_seconds(RUSAGE_SELF) - p0;
    caller += cpu_seconds(RUSAGE_THREAD) - c0;
  }
  if (cpu) *cpu = {process / iterations, (process - caller) / iterations};
  return stats_of(max_over_ranks(t, MPI_COMM_WORLD)).median;
}

Overlap measure(Nonblocking& op, int iterations, double rate) {
  Overlap o;
  for (int w = 0; w < 3; ++w) {
    op.start();
    op.finish();
  }
  o.t_pure = median_max_time(iterations, [&] {
    op.start();
    op.finish();
  });
  // Size the computation to t_pure, correcting the rate once from a real run.
  auto units = static_cast<long long>(o.t_pure * rate);
  o.t_cpu = median_max_time(iterations, [&] { compute(units); });
  units = static_cast<long long>(static_cast<double>(units) * o.t_pure / o.t_cpu);
  CpuPerIteration cpu_alone, cpu_overlapped;
  o.t_cpu = median_max_time(iterations, [&] { compute(units); }, &cpu_alone);
  o.t_ovrl = median_max_time(
      iterations,
      [&] {
        op.start();
        compute(units);
        op.finish();
      },
      &cpu_overlapped);
  const std::vector<double> largest =
      max_over_ranks({cpu_overlapped.process - cpu_alone.process, cpu_alone.other_threads}, MPI_COMM_WORLD);
  o.collective_cpu = largest[0];
  o.idle_cpu = largest[1];
  const double hidden = (o.t_pure + o.t_cpu - o.t_ovrl) / std::min(o.t_pure, o.t_cpu);
  o.percent = 100.0 * std::max(0.0, std::min(1.0, hidden));
  return o;
}

}  // namespace

int run_overlap(Communicator& comm, const OverlapOptions& o) {
  const int iterations = o.iterations;
  const std::string& algorithm = o.algorithm;
  print_run_header("overlap (allreduce, float32, sum; IMB-NBC method)", o.command_line, MPI_COMM_WORLD);
  double rate = units_per_second();
  MPI_Allreduce(MPI_IN_PLACE, &rate, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  Csv csv(o.csv,
          "job,algorithm,ranks,bytes,overlap_pct,mpi_overlap_pct,wrong,t_pure_s,t_cpu_s,t_ovrl_s,mpi_t_pure_s,mpi_t_"
          "cpu_s,mpi_t_ovrl_s,collective_cpu_s,mpi_collective_cpu_s,idle_cpu_s",
          comm.rank());
  if (comm.rank() == 0)
    std::printf(
        "# times in us (median over %d iterations of the slowest rank); *_coll: CPU time an overlapped iteration\n"
        "# used beyond the computation alone (all threads of the process, mean, largest rank); eb_idle: CPU time\n"
        "# the library's threads used during earlybird's computation-only iterations (the communicator idle)\n"
        "%10s  %-12s %9s %9s %9s %9s %9s %8s | %9s %9s %9s %9s %9s %6s\n",
        iterations, "bytes", "algorithm", "eb_pure", "eb_cpu", "eb_ovrl", "eb_ovl%", "eb_coll", "eb_idle", "mpi_pure",
        "mpi_cpu", "mpi_ovrl", "mpi_ovl%", "mpi_coll", "wrong");
  long long total_wrong = 0;
  for (std::size_t bytes : o.sizes) {
    const std::size_t count = std::max<std::size_t>(1, bytes / sizeof(float));
    std::vector<float> in(count), eb_out(count), mpi_out(count);
    for (std::size_t i = 0; i < count; ++i) in[i] = static_cast<float>((comm.rank() + static_cast<int>(i % 97)) % 5);
    CollectiveOptions options;
    options.algorithm = algorithm == "auto" ? "" : algorithm;
    Future future;
    Nonblocking eb{
        [&] { future = comm.allreduce(std::span<const float>(in), std::span<float>(eb_out), Op::sum, options); },
        [&] { future.wait(); }};
    MPI_Request request;
    Nonblocking mpi{[&] {
                      MPI_Iallreduce(in.data(), mpi_out.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM,
                                     MPI_COMM_WORLD, &request);
                    },
                    [&] { MPI_Wait(&request, MPI_STATUS_IGNORE); }};
    const Overlap e = measure(eb, iterations, rate);
    const Overlap m = measure(mpi, iterations, rate);
    long long wrong = std::memcmp(eb_out.data(), mpi_out.data(), count * sizeof(float)) != 0 ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    total_wrong += wrong;
    if (comm.rank() == 0)
      std::printf("%10zu  %-12s %9.1f %9.1f %9.1f %9.1f %9.1f %8.1f | %9.1f %9.1f %9.1f %9.1f %9.1f %6lld\n",
                  count * sizeof(float), algorithm.c_str(), e.t_pure * 1e6, e.t_cpu * 1e6, e.t_ovrl * 1e6, e.percent,
                  e.collective_cpu * 1e6, e.idle_cpu * 1e6, m.t_pure * 1e6, m.t_cpu * 1e6, m.t_ovrl * 1e6, m.percent,
                  m.collective_cpu * 1e6, wrong);
    char line[512];
    std::snprintf(line, sizeof line, "overlap,%s,%d,%zu,%.2f,%.2f,%lld,%.9f,%.9f,%.9f,%.9f,%.9f,%.9f,%.9f,%.9f,%.9f",
                  algorithm.c_str(), comm.size(), count * sizeof(float), e.percent, m.percent, wrong, e.t_pure, e.t_cpu,
                  e.t_ovrl, m.t_pure, m.t_cpu, m.t_ovrl, e.collective_cpu, m.collective_cpu, e.idle_cpu);
    csv.row(line);
    std::fflush(stdout);
    progress(comm.rank(), "overlap " + format_bytes(count * sizeof(float)) + " done");
  }
  return total_wrong == 0 ? 0 : 2;
}

}  // namespace earlybird::bench
