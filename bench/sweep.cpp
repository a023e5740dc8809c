// eb-bench sweep: latency per message size per algorithm, against
// MPI_Allreduce interleaved in the same loop. A rank's time runs from the
// barrier's return to its own completion; the collective's time is the maximum
// over ranks. Every timed result is compared with MPI_Allreduce's.
#include "bench_common.hpp"
#include "jobs.hpp"

#include <earlybird/collectives/allreduce.hpp>

#include <cstring>
#include <sstream>

namespace earlybird::bench {
namespace {

struct Measured {
  Stats eb, mpi;
  long long wrong = 0;
  int iterations = 0;
};

std::vector<float> sweep_input(int rank, std::size_t count) {
  std::vector<float> v(count);
  for (std::size_t i = 0; i < count; ++i) v[i] = static_cast<float>((rank * 7 + static_cast<int>(i % 1013) * 3) % 11);
  return v;
}

double time_mpi(const std::vector<float>& in, std::vector<float>& out, MPI_Comm comm) {
  MPI_Barrier(comm);
  const double t0 = MPI_Wtime();
  MPI_Allreduce(in.data(), out.data(), static_cast<int>(in.size()), MPI_FLOAT, MPI_SUM, comm);
  return MPI_Wtime() - t0;
}

double time_earlybird(Communicator& comm, MPI_Comm mpi, const std::vector<float>& in, std::vector<float>& out,
                      const AllreduceOptions& options) {
  MPI_Barrier(mpi);
  const double t0 = MPI_Wtime();
  comm.allreduce(std::span<const float>(in), std::span<float>(out), Op::sum, options).wait();
  return MPI_Wtime() - t0;
}

Measured measure(Communicator& comm, std::size_t count, const AllreduceOptions& options, double budget_s) {
  MPI_Comm mpi = MPI_COMM_WORLD;
  const std::vector<float> in = sweep_input(comm.rank(), count);
  std::vector<float> ref(count), out(count);
  for (int w = 0; w < 3; ++w) {
    time_mpi(in, ref, mpi);
    time_earlybird(comm, mpi, in, out, options);
  }
  double probe = time_mpi(in, ref, mpi) + time_earlybird(comm, mpi, in, out, options);
  MPI_Allreduce(MPI_IN_PLACE, &probe, 1, MPI_DOUBLE, MPI_MAX, mpi);
  Measured m;
  m.iterations = iterations_for(probe, budget_s, 5, 400);
  std::vector<double> eb_t, mpi_t;
  long long wrong = 0;
  for (int k = 0; k < m.iterations; ++k) {
    std::fill(out.begin(), out.end(), -1.0f);
    mpi_t.push_back(time_mpi(in, ref, mpi));
    eb_t.push_back(time_earlybird(comm, mpi, in, out, options));
    if (std::memcmp(out.data(), ref.data(), count * sizeof(float)) != 0) ++wrong;
  }
  MPI_Allreduce(&wrong, &m.wrong, 1, MPI_LONG_LONG, MPI_SUM, mpi);
  m.eb = stats_of(max_over_ranks(eb_t, mpi));
  m.mpi = stats_of(max_over_ranks(mpi_t, mpi));
  return m;
}

std::string fixed(double v, int digits) {
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(digits);
  s << v;
  return s.str();
}

}  // namespace

int run_sweep(Communicator& comm, const Args& args) {
  const auto sizes = args.sizes("sizes", "8:16M");
  std::vector<std::string> algorithms = args.list("algorithms", "auto");
  if (args.get("algorithms", "") == "all") {
    algorithms = {"auto"};
    for (const auto& a : coll::allreduce_algorithms()) algorithms.emplace_back(a.name);
  }
  const double budget = std::stod(args.get("budget", "0.3"));
  const std::size_t segment = args.has("segment") ? parse_bytes(args.get("segment", "0")) : 0;
  const int p = comm.size();
  print_run_header("sweep (allreduce, float32, sum)", args, MPI_COMM_WORLD);
  Csv csv(args.get("csv", ""),
          "job,algorithm,ranks,bytes,median_s,mpi_median_s,ratio,wrong,p10_s,p90_s,mpi_p10_s,mpi_p90_s,busbw_gbs,iterations",
          comm.rank());
  if (comm.rank() == 0)
    std::printf("# ratio = earlybird median / MPI_Allreduce median (below 1: earlybird faster); times in us\n"
                "%10s  %-20s %10s %10s %10s %10s %10s %7s %9s %6s\n",
                "bytes", "algorithm", "eb_med", "eb_p10", "eb_p90", "mpi_med", "mpi_p90", "ratio", "busbw", "wrong");
  long long total_wrong = 0;
  for (std::size_t bytes : sizes) {
    const std::size_t count = std::max<std::size_t>(1, bytes / sizeof(float));
    for (const auto& name : algorithms) {
      AllreduceOptions options;
      options.algorithm = name == "auto" ? "" : name;
      options.segment_bytes = segment;
      const Measured m = measure(comm, count, options, budget);
      total_wrong += m.wrong;
      const double ratio = m.eb.median / m.mpi.median;
      const double busbw = 2.0 * (p - 1) / p * static_cast<double>(count * sizeof(float)) / m.eb.median / 1e9;
      if (comm.rank() == 0)
        std::printf("%10zu  %-20s %10.1f %10.1f %10.1f %10.1f %10.1f %7.2f %9.2f %6lld\n", count * sizeof(float),
                    name.c_str(), m.eb.median * 1e6, m.eb.p10 * 1e6, m.eb.p90 * 1e6, m.mpi.median * 1e6,
                    m.mpi.p90 * 1e6, ratio, busbw, m.wrong);
      csv.row("sweep," + name + "," + std::to_string(p) + "," + std::to_string(count * sizeof(float)) + "," +
              fixed(m.eb.median, 9) + "," + fixed(m.mpi.median, 9) + "," + fixed(ratio, 4) + "," +
              std::to_string(m.wrong) + "," + fixed(m.eb.p10, 9) + "," + fixed(m.eb.p90, 9) + "," +
              fixed(m.mpi.p10, 9) + "," + fixed(m.mpi.p90, 9) + "," + fixed(busbw, 3) + "," +
              std::to_string(m.iterations));
      std::fflush(stdout);
    }
    progress(comm.rank(), "sweep " + format_bytes(count * sizeof(float)) + " done");
  }
  if (comm.rank() == 0) std::printf("# wrong results in total: %lld\n", total_wrong);
  return total_wrong == 0 ? 0 : 2;
}

}  // namespace earlybird::bench
