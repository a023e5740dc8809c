// eb-bench warmup: what the first collective on a fresh communicator costs
// against a warm one, for earlybird without warm-up, earlybird after
// warm_up().wait(), and the MPI library (MPI_Comm_dup + MPI_Allreduce).
// Per contender and size, N fresh communicators are made one after another;
// on each, after a barrier, the first allreduce is timed, then --iters more
// (warm). A call's time is its slowest rank's; "first" is the median (and the
// maximum) over the N communicators, "warm" the median of all warm calls,
// ratio = first / warm. Creating a communicator (its window, a transport
// self-test, warm_up) is timed apart ("made"), with the resident memory it
// added ("+RSS"). Every result is compared with the exact
// sum (pap_inputs.hpp). A later contender finds what an earlier one prepared
// in the process (auto's choices, the catalogue); the process's own first
// call is timed by one contender alone, --communicators 1, in a fresh job.
//
// MPI libraries connect two processes at their first message and keep the
// connection for every later communicator: only the first communicator
// between two processes across nodes pays for it, and the world's creation
// (earlybird's own set-up) may already have paid. The maximum shows that one.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

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

// Calls as this rank saw them: when each began and ended (seconds of the
// steady clock).
struct Calls {
  std::vector<double> begin, end;
};

// Per call: the slowest rank's seconds, and (`after_last`) the seconds from
// the last rank's arrival to the last rank's return, which leaves out a rank
// waiting for a peer that left the barrier late (a barrier's ranks leave it
// up to a scheduler slice apart on a loaded CPU); that needs one clock, so
// only where every rank runs on one machine (empty elsewhere).
struct Timings {
  std::vector<double> slowest, after_last;
};

Timings timings_of(const Calls& calls, bool one_clock) {
  Timings t;
  std::vector<double> own(calls.begin.size());
  for (std::size_t i = 0; i < own.size(); ++i) own[i] = calls.end[i] - calls.begin[i];
  t.slowest = max_over_ranks(own, MPI_COMM_WORLD);
  if (!one_clock) return t;
  const std::vector<double> last_begin = max_over_ranks(calls.begin, MPI_COMM_WORLD);
  const std::vector<double> last_end = max_over_ranks(calls.end, MPI_COMM_WORLD);
  for (std::size_t i = 0; i < own.size(); ++i) t.after_last.push_back(last_end[i] - last_begin[i]);
  return t;
}

// What one side did at one size. made: per communicator, the slowest rank's
// seconds to make it (and wait for warm_up); resident: the most bytes of
// resident memory making it added on a rank (while it lives).
struct Measured {
  Timings first, warm;
  std::vector<double> made, resident;
  long long wrong = 0;
};

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// This process's resident memory in bytes (/proc/self/statm; 0 where there
// is none).
double resident_bytes() {
  std::FILE* statm = std::fopen("/proc/self/statm", "r");
  if (!statm) return 0;
  long pages = 0, resident = 0;
  const int read = std::fscanf(statm, "%ld %ld", &pages, &resident);
  std::fclose(statm);
  return read == 2 ? static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) : 0;
}

// One call after `gap_us` idle and a barrier on every rank, into `calls`;
// `wrong` gets 1.0 when this rank's result differs from the exact sum (else
// 0.0).
void timed(const Contender& contender, Buffers& buffers, int gap_us, Calls& calls, std::vector<double>& wrong) {
  reset_output(allreduce_spec(), buffers);
  if (gap_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(gap_us));
  MPI_Barrier(MPI_COMM_WORLD);
  calls.begin.push_back(steady_seconds());
  contender.call(buffers);
  calls.end.push_back(steady_seconds());
  wrong.push_back(output_matches(allreduce_spec(), buffers) ? 0.0 : 1.0);
}

Measured measure(const Side& side, Buffers& buffers, const WarmupOptions& o, bool one_clock) {
  Calls first, warm;
  std::vector<double> wrong, made, resident;
  for (int c = 0; c < o.communicators; ++c) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double resident_before = resident_bytes(), began = steady_seconds();
    const std::unique_ptr<Fresh> fresh = side.make();
    made.push_back(steady_seconds() - began);
    resident.push_back(resident_bytes() - resident_before);
    timed(fresh->contender, buffers, o.gap_us, first, wrong);
    for (int k = 0; k < o.iterations; ++k) timed(fresh->contender, buffers, o.gap_us, warm, wrong);
  }
  return {timings_of(first, one_clock), timings_of(warm, one_clock), max_over_ranks(made, MPI_COMM_WORLD),
          max_over_ranks(resident, MPI_COMM_WORLD), wrong_iterations(wrong)};
}

// "median max" of `first`, "median" of `warm` and their ratio, in us; "-" for
// an empty series.
struct Row {
  std::string text, csv;
};
Row row_of(const std::vector<double>& first, const std::vector<double>& warm) {
  if (first.empty()) return {"         -          -          -       -", ",,,"};
  const double median = stats_of(first).median, most = *std::max_element(first.begin(), first.end());
  const double warm_median = stats_of(warm).median;
  char text[128], csv[128];
  std::snprintf(text, sizeof text, "%10.1f %10.1f %10.1f %7.2f", median * 1e6, most * 1e6, warm_median * 1e6,
                median / warm_median);
  std::snprintf(csv, sizeof csv, "%.9f,%.9f,%.9f,%.4f", median, most, warm_median, median / warm_median);
  return {text, csv};
}

void print_table_header(const WarmupOptions& o) {
  std::printf(
      "# earlybird algorithm %s; earlybird communicators spanning nodes (p2p transport) also warm up by themselves "
      "at creation, asynchronously\n"
      "# first: the first allreduce on a fresh communicator, median and max over %d communicators; warm: median of "
      "the %d calls after it on each; ratio = first / warm; times in us; each call after %d us idle and a barrier. "
      "Left: the slowest rank's call; right (*): from the last rank's arrival to the last return, where every rank "
      "runs on one machine (one clock), else -; made: the slowest rank's time to make a communicator (and wait for its "
      "warm_up), ms; +RSS: the resident memory that added on a rank (the most), KiB; both medians over the "
      "communicators\n"
      "%10s  %-18s %10s %10s %10s %7s %10s %10s %10s %7s %8s %8s %6s\n",
      o.algorithm.c_str(), o.communicators, o.iterations, o.gap_us, "bytes", "contender", "first", "first_max", "warm",
      "ratio", "first*", "first_max*", "warm*", "ratio*", "made", "+RSS", "wrong");
}

}  // namespace

int run_warmup(Communicator& comm, const WarmupOptions& o) {
  print_run_header("warmup (allreduce, float32, sum; first call on a fresh communicator vs warm calls)", o.command_line,
                   MPI_COMM_WORLD);
  Csv csv(o.csv,
          "job,contender,algorithm,ranks,bytes,communicators,iters,gap_us,first_median_s,first_max_s,warm_median_s,"
          "ratio,after_last_first_median_s,after_last_first_max_s,after_last_warm_median_s,after_last_ratio,"
          "made_median_s,"
          "resident_median_bytes,wrong",
          comm.rank());
  const bool one_clock = ranks_on_this_machine(MPI_COMM_WORLD, 0) == comm.size();
  if (comm.rank() == 0) print_table_header(o);
  Totals totals;
  const std::vector<Side> contenders = sides(comm, o.algorithm, o.contenders);
  for (std::size_t s = 0; s < o.sizes.size(); ++s) {
    const std::size_t count = std::max<std::size_t>(1, o.sizes[s] / sizeof(float));
    Buffers buffers = pap::make_pap_buffers(count, comm.rank(), comm.size());
    pap::refill(buffers, 1, s, comm.rank(), comm.size());
    for (const Side& side : contenders) {
      const Measured m = measure(side, buffers, o, one_clock);
      const Row slowest = row_of(m.first.slowest, m.warm.slowest);
      const Row after_last = row_of(m.first.after_last, m.warm.after_last);
      const double made_s = stats_of(m.made).median, resident = stats_of(m.resident).median;
      totals.wrong += m.wrong;
      if (comm.rank() == 0)
        std::printf("%10zu  %-18s %s %s %8.2f %8.0f %6lld\n", count * sizeof(float), side.label.c_str(),
                    slowest.text.c_str(), after_last.text.c_str(), made_s * 1e3, resident / 1024, m.wrong);
      char line[640];
      std::snprintf(line, sizeof line, "warmup,%s,%s,%d,%zu,%d,%d,%d,%s,%s,%.9f,%.0f,%lld", side.label.c_str(),
                    o.algorithm.c_str(), comm.size(), count * sizeof(float), o.communicators, o.iterations, o.gap_us,
                    slowest.csv.c_str(), after_last.csv.c_str(), made_s, resident, m.wrong);
      csv.row(line);
      std::fflush(stdout);
    }
    progress(comm.rank(), "warmup " + format_bytes(count * sizeof(float)) + " done");
  }
  return totals.exit_code();
}

}  // namespace earlybird::bench
