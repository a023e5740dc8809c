// eb-bench warmup: what the first collective on a fresh communicator costs
// against a warm one, for earlybird without warm-up, earlybird after
// warm_up().wait(), and the MPI library (MPI_Comm_dup + MPI_Allreduce).
// Per contender and size, N fresh communicators are made one after another;
// on each, after a barrier, the first allreduce is timed, then --iters more
// (warm). A call's time is its slowest rank's; "first" is the median (and the
// maximum) over the N communicators, "warm" the median of all warm calls,
// ratio = first / warm. Creating a communicator (its window, a transport
// self-test, warm_up) is not timed. Every result is compared with the exact
// sum (pap_inputs.hpp). A later contender finds what an earlier one prepared
// in the process (auto's choices, the catalogue); the process's own first
// call is timed by one contender alone, --communicators 1, in a fresh job.
//
// MPI libraries connect two processes at their first message and keep the
// connection for every later communicator: only the first communicator
// between two processes across nodes pays for it, and the world's creation
// (earlybird's own set-up) may already have paid. The maximum shows that one.
#include <algorithm>
#include <functional>
#include <memory>

#include "bench_common.hpp"
#include "collective_table.hpp"
#include "contenders.hpp"
#include "format.hpp"
#include "jobs.hpp"
#include "pap_inputs.hpp"

namespace earlybird::bench {
namespace {

const CollectiveSpec& allreduce_spec() { return collective_spec("allreduce"); }

// A fresh communicator, earlybird's or MPI's, and the call on it. Destroying
// it frees the communicator (collective).
struct Fresh {
  Communicator earlybird;
  MPI_Comm mpi = MPI_COMM_NULL;
  Contender contender;  // refers to `earlybird`: a Fresh stays where it was made
  Fresh() = default;
  Fresh(const Fresh&) = delete;
  Fresh& operator=(const Fresh&) = delete;
  ~Fresh() {
    if (mpi != MPI_COMM_NULL) MPI_Comm_free(&mpi);
  }
};

// A contender of this job: how to make one fresh communicator (untimed).
struct Side {
  std::string label;
  std::function<std::unique_ptr<Fresh>()> make;
};

// A split of `world` into one communicator (a new window and transport),
// warmed up and waited for when `warm_up`.
std::unique_ptr<Fresh> fresh_earlybird(Communicator& world, const std::string& algorithm, bool warm_up) {
  auto fresh = std::make_unique<Fresh>();
  fresh->earlybird = world.split(0, world.rank());
  if (warm_up) fresh->earlybird.warm_up().wait();
  fresh->contender = earlybird_contender(allreduce_spec(), algorithm, fresh->earlybird, {});
  return fresh;
}

std::unique_ptr<Fresh> fresh_mpi() {
  auto fresh = std::make_unique<Fresh>();
  MPI_Comm_dup(MPI_COMM_WORLD, &fresh->mpi);
  fresh->contender = mpi_contender(allreduce_spec(), "mpi", fresh->mpi);
  return fresh;
}

// The contenders `labels` names, in that order.
std::vector<Side> sides(Communicator& world, const std::string& algorithm, const std::vector<std::string>& labels) {
  const std::vector<Side> all{
      {"earlybird", [&world, algorithm] { return fresh_earlybird(world, algorithm, false); }},
      {"earlybird+warm_up", [&world, algorithm] { return fresh_earlybird(world, algorithm, true); }},
      {"mpi", fresh_mpi},
  };
  std::vector<Side> chosen;
  for (const std::string& label : labels)
    for (const Side& side : all)
      if (side.label == label) chosen.push_back(side);
  return chosen;
}

// What one side did at one size: per call, the slowest rank's seconds.
struct Measured {
  std::vector<double> first, warm;
  long long wrong = 0;
};

// One call after a barrier on every rank: this rank's seconds; `wrong` gets
// 1.0 when this rank's result differs from the exact sum (else 0.0).
double timed(const Contender& contender, Buffers& buffers, std::vector<double>& wrong) {
  reset_output(allreduce_spec(), buffers);
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  contender.call(buffers);
  const double seconds = MPI_Wtime() - t0;
  wrong.push_back(output_matches(allreduce_spec(), buffers) ? 0.0 : 1.0);
  return seconds;
}

Measured measure(const Side& side, Buffers& buffers, int communicators, int iterations) {
  std::vector<double> first, warm, wrong;
  for (int c = 0; c < communicators; ++c) {
    const std::unique_ptr<Fresh> fresh = side.make();
    first.push_back(timed(fresh->contender, buffers, wrong));
    for (int k = 0; k < iterations; ++k) warm.push_back(timed(fresh->contender, buffers, wrong));
  }
  return {max_over_ranks(first, MPI_COMM_WORLD), max_over_ranks(warm, MPI_COMM_WORLD), wrong_iterations(wrong)};
}

void print_table_header(const WarmupOptions& o) {
  std::printf(
      "# earlybird algorithm %s; earlybird communicators spanning nodes (p2p transport) also warm up by themselves "
      "at creation, asynchronously\n"
      "# first: the first allreduce on a fresh communicator, median and max over %d communicators; warm: median of "
      "the %d calls after it on each; ratio = first / warm; times in us (slowest rank)\n"
      "%10s  %-18s %10s %10s %10s %7s %6s\n",
      o.algorithm.c_str(), o.communicators, o.iterations, "bytes", "contender", "first", "first_max", "warm", "ratio",
      "wrong");
}

}  // namespace

int run_warmup(Communicator& comm, const WarmupOptions& o) {
  print_run_header("warmup (allreduce, float32, sum; first call on a fresh communicator vs warm calls)", o.command_line,
                   MPI_COMM_WORLD);
  Csv csv(o.csv, "job,contender,algorithm,ranks,bytes,communicators,iters,first_median_s,first_max_s,warm_median_s,ratio,wrong",
          comm.rank());
  if (comm.rank() == 0) print_table_header(o);
  Totals totals;
  const std::vector<Side> contenders = sides(comm, o.algorithm, o.contenders);
  for (std::size_t s = 0; s < o.sizes.size(); ++s) {
    const std::size_t count = std::max<std::size_t>(1, o.sizes[s] / sizeof(float));
    Buffers buffers = pap::make_pap_buffers(count, comm.rank(), comm.size());
    pap::refill(buffers, 1, s, comm.rank(), comm.size());
    for (const Side& side : contenders) {
      const Measured m = measure(side, buffers, o.communicators, o.iterations);
      const double first = stats_of(m.first).median, first_max = *std::max_element(m.first.begin(), m.first.end());
      const double warm = stats_of(m.warm).median;
      totals.wrong += m.wrong;
      if (comm.rank() == 0)
        std::printf("%10zu  %-18s %10.1f %10.1f %10.1f %7.2f %6lld\n", count * sizeof(float), side.label.c_str(),
                    first * 1e6, first_max * 1e6, warm * 1e6, first / warm, m.wrong);
      char line[512];
      std::snprintf(line, sizeof line, "warmup,%s,%s,%d,%zu,%d,%d,%.9f,%.9f,%.9f,%.4f,%lld", side.label.c_str(),
                    o.algorithm.c_str(), comm.size(), count * sizeof(float), o.communicators, o.iterations, first,
                    first_max, warm, first / warm, m.wrong);
      csv.row(line);
      std::fflush(stdout);
    }
    progress(comm.rank(), "warmup " + format_bytes(count * sizeof(float)) + " done");
  }
  return totals.exit_code();
}

}  // namespace earlybird::bench
