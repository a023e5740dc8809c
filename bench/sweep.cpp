// eb-bench sweep: latency per message size of one collective, for each
// earlybird algorithm, against the MPI library's matching collective (its
// default choice and, with --mpi-algorithms, each coll_tuned algorithm forced)
// interleaved in the same loop: every iteration runs every contender once, in
// a fixed order. A rank's time runs from the barrier's return to its own
// completion; the collective's time is the maximum over ranks. Every timed
// result is compared with the MPI default's.
#include <algorithm>
#include <chrono>
#include <earlybird/collectives/catalogue.hpp>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "bench_common.hpp"
#include "collective_table.hpp"
#include "contenders.hpp"
#include "format.hpp"
#include "jobs.hpp"
#include "measure.hpp"
#include "memory_bound.hpp"
#include "mpi_tuned.hpp"

namespace earlybird::bench {
namespace {

constexpr const char* kMpiDefault = "mpi:default";
// Below this, latency decides, not memory traffic: no bound is printed.
constexpr std::size_t kMemoryBoundFrom = 64 * 1024;
constexpr int kMemoryRepetitions = 5;

// ---- contenders ----------------------------------------------------------

// --algorithms: "all" (the catalogue and auto), "none" (time MPI only), or names.
std::vector<std::string> earlybird_algorithms(const CollectiveSpec& spec, const std::vector<std::string>& choice) {
  if (choice == std::vector<std::string>{"none"}) return {};
  if (choice != std::vector<std::string>{"all"}) return choice;
  std::vector<std::string> names = {"auto"};
  for (const auto& a : coll::algorithms(spec.kind)) names.emplace_back(a.name);
  return names;
}

// Frees the forced-algorithm communicators (before the MPI_T session ends).
struct OwnedComms {
  std::vector<MPI_Comm> comms;
  ~OwnedComms() {
    for (MPI_Comm& c : comms) MPI_Comm_free(&c);
  }
};

void add_forced_mpi(const CollectiveSpec& spec, const std::vector<std::string>& selection, TunedForcing& forcing,
                    OwnedComms& owned, std::vector<Contender>& contenders, int rank) {
  if (!forcing.unavailable_reason().empty()) {
    if (rank == 0) std::printf("# MPI algorithms not forced: %s\n", forcing.unavailable_reason().c_str());
    return;
  }
  for (const auto& algorithm : select_tuned(forcing.algorithms(), selection)) {
    owned.comms.push_back(forcing.forced_comm(algorithm, MPI_COMM_WORLD));
    contenders.push_back(mpi_contender(spec, "mpi:" + algorithm.name, owned.comms.back()));
  }
}

// ---- reporting -----------------------------------------------------------

// The fastest timed MPI contender (the default when nothing beats it).
std::size_t best_mpi(const std::vector<Contender>& contenders, const SizeResult& r) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < contenders.size(); ++i)
    if (contenders[i].is_mpi && r.outcomes[i].timed() && r.outcomes[i].stats.median < r.outcomes[best].stats.median)
      best = i;
  return best;
}

struct Report {
  const CollectiveSpec& spec;
  const std::vector<Contender>& contenders;
  int ranks;
  Sampling sampling;
  bool futures;
  bool in_place;
  // The CSV's collective: its name, "_in_place" appended for calls in place.
  std::string collective() const { return std::string(spec.name) + (in_place ? "_in_place" : ""); }

  double busbw_gbs(const SizeResult& r, const Outcome& o) const {
    const double bytes = static_cast<double>(moved_bytes(spec, ranks, r.bytes / sizeof(float)));
    return spec.bus_factor(ranks) * bytes / o.stats.median / 1e9;
  }

  void print_header() const {
    if (sampling.calls > 1)
      std::printf("# timing: %d calls back to back per sample after one barrier, the slowest rank's time per call\n",
                  sampling.calls);
    else
      std::printf("# timing: a barrier before every call, the slowest rank's time\n");
    if (sampling.idle_us > 0)
      std::printf("# idle: every rank sleeps %d us before each sample's barrier\n", sampling.idle_us);
    std::printf("# earlybird calls: %s\n", futures ? "futures (progress thread over 64 KiB), each then waited for"
                                                     : "blocking (CollectiveOptions::blocking)");
    std::printf(
        "# ratio = median / %s median (default choice, mpi:default); /best = median / the fastest MPI "
        "variant's; below 1: faster; times in us\n"
        "%10s  %-*s %10s %10s %10s %7s %7s %9s %6s\n",
        spec.mpi_function, "bytes", label_width(), "algorithm", "median", "p10", "p90", "ratio", "/best", "busbw",
        "wrong");
  }

  void print_size(const SizeResult& r, const std::optional<MemoryRates>& rates) const {
    const std::size_t best = best_mpi(contenders, r);
    const Stats& mpi = r.outcomes[0].stats;
    for (std::size_t i = 0; i < contenders.size(); ++i) {
      const Outcome& o = r.outcomes[i];
      if (!o.timed()) {
        std::printf("%10zu  %-*s failed: %s\n", r.bytes, label_width(), contenders[i].label.c_str(), o.error.c_str());
        continue;
      }
      std::printf("%10zu  %-*s %10.2f %10.2f %10.2f %7.2f %7.2f %9.2f %6lld\n", r.bytes, label_width(),
                  contenders[i].label.c_str(), o.stats.median * 1e6, o.stats.p10 * 1e6, o.stats.p90 * 1e6,
                  o.stats.median / mpi.median, o.stats.median / r.outcomes[best].stats.median, busbw_gbs(r, o),
                  o.wrong);
    }
    std::printf("# %s: fastest MPI variant %s (%.2f us)\n", format_bytes(r.bytes).c_str(),
                contenders[best].label.c_str(), r.outcomes[best].stats.median * 1e6);
    if (rates) print_memory_bound(r, *rates);
    print_pair_ratios(r);
  }

  // memory_bound.hpp: the bound, the rates it rests on, and each earlybird
  // contender's median against it.
  void print_memory_bound(const SizeResult& r, const MemoryRates& rates) const {
    const double bound = allreduce_memory_bound_s(rates, r.bytes, ranks);
    if (bound <= 0) return;
    std::printf("# %s: memory-traffic bound %.1f us (copy %.2f GB/s, reduce %.2f GB/s, measured now on every rank at "
                "once); median / bound:",
                format_bytes(r.bytes).c_str(), bound * 1e6, 1e-9 / rates.copy_s_per_byte,
                1e-9 / rates.reduce_s_per_byte);
    for (std::size_t i = 0; i < contenders.size(); ++i)
      if (r.outcomes[i].timed()) std::printf(" %s %.2f", contenders[i].label.c_str(), r.outcomes[i].stats.median / bound);
    std::printf("\n");
  }

  // Ratio of every earlybird algorithm to every MPI variant at one size.
  void print_pair_ratios(const SizeResult& r) const {
    std::vector<std::size_t> mpi, eb;
    for (std::size_t i = 0; i < contenders.size(); ++i)
      if (r.outcomes[i].timed()) (contenders[i].is_mpi ? mpi : eb).push_back(i);
    if (mpi.size() < 2 || eb.empty()) return;
    const int width = label_width();
    std::printf("# %s: median ratio earlybird / MPI variant\n#   %-*s", format_bytes(r.bytes).c_str(), width, "");
    for (std::size_t m : mpi) std::printf(" %*s", column_width(m), contenders[m].label.c_str() + 4);
    for (std::size_t e : eb) {
      std::printf("\n#   %-*s", width, contenders[e].label.c_str());
      for (std::size_t m : mpi)
        std::printf(" %*.2f", column_width(m), r.outcomes[e].stats.median / r.outcomes[m].stats.median);
    }
    std::printf("\n");
  }

  int label_width() const {
    std::size_t width = 12;
    for (const auto& c : contenders) width = std::max(width, c.label.size());
    return static_cast<int>(width);
  }

  int column_width(std::size_t mpi_index) const {
    return std::max(6, static_cast<int>(contenders[mpi_index].label.size()) - 4);
  }

  static const char* csv_header() {
    return "job,collective,algorithm,ranks,bytes,median_s,mpi_median_s,ratio,wrong,p10_s,p90_s,mpi_p10_s,mpi_p90_s,"
           "busbw_gbs,iterations,implementation,best_mpi_algorithm,best_mpi_median_s,best_mpi_ratio,memory_bound_s,"
           "idle_us";
  }

  void write_csv(Csv& csv, const SizeResult& r, const std::optional<MemoryRates>& rates) const {
    const std::size_t best = best_mpi(contenders, r);
    const double bound = rates ? allreduce_memory_bound_s(*rates, r.bytes, ranks) : 0;
    const Stats& mpi = r.outcomes[0].stats;
    const Stats& top = r.outcomes[best].stats;
    for (std::size_t i = 0; i < contenders.size(); ++i) {
      const Outcome& o = r.outcomes[i];
      if (!o.timed()) continue;
      csv.row("sweep," + collective() + "," + contenders[i].label + "," + std::to_string(ranks) + "," +
              std::to_string(r.bytes) + "," + fixed(o.stats.median, 9) + "," + fixed(mpi.median, 9) + "," +
              fixed(o.stats.median / mpi.median, 4) + "," + std::to_string(o.wrong) + "," + fixed(o.stats.p10, 9) +
              "," + fixed(o.stats.p90, 9) + "," + fixed(mpi.p10, 9) + "," + fixed(mpi.p90, 9) + "," +
              fixed(busbw_gbs(r, o), 3) + "," + std::to_string(r.iterations) + "," +
              (contenders[i].is_mpi ? "mpi" : "earlybird") + "," + contenders[best].label + "," + fixed(top.median, 9) +
              "," + fixed(o.stats.median / top.median, 4) + "," + fixed(bound, 9) + "," +
              std::to_string(sampling.idle_us));
    }
  }
};

// ---- the tuned row (--tuned) --------------------------------------------

// `auto` on a communicator of its own, on which Communicator::tune pinned a
// choice before each size; the plain `auto` row stays the cost model's.
struct TunedRow {
  Communicator comm;
  TuneOptions options;
};

std::unique_ptr<TunedRow> tuned_row(const SweepOptions& o, Communicator& comm) {
  if (o.tune < 0) return nullptr;
  if (o.shared_buffers)
    throw std::invalid_argument("--tuned times ordinary buffers; it cannot be combined with --shared-buffers");
  TuneOptions options;
  options.candidates = static_cast<std::size_t>(o.tune);
  options.budget = std::chrono::milliseconds(static_cast<long long>(o.tune_budget_s * 1000));
  options.blocking = !o.futures;
  return std::make_unique<TunedRow>(TunedRow{comm.split(0, comm.rank()), options});
}

void add_to_totals(Totals& totals, const std::vector<Contender>& contenders, const SizeResult& r) {
  for (std::size_t i = 0; i < contenders.size(); ++i) {
    totals.wrong += r.outcomes[i].wrong;
    if (!contenders[i].is_mpi && !r.outcomes[i].timed()) ++totals.earlybird_failures;
  }
}

}  // namespace

int run_sweep(Communicator& comm, const SweepOptions& o) {
  const CollectiveSpec& spec = collective_spec(o.collective);
  CollectiveOptions options;
  options.segment_bytes = o.segment_bytes;
  options.fanout = o.fanout;
  options.blocking = !o.futures;  // each call is waited for at once, as MPI's are
  options.shared_buffers = o.shared_buffers;
  const int rank = comm.rank(), ranks = comm.size();

  if (o.root >= ranks) throw std::invalid_argument("--root " + std::to_string(o.root) + " is not a rank of " +
                                                   std::to_string(ranks));
  const std::string root = spec.rooted() ? ", root " + std::to_string(o.root) : "";
  const std::string job =
      std::string("sweep (") + spec.name + ", " + spec.arguments + root + (o.in_place ? ", in place" : "") +
      (o.shared_buffers ? ", shared buffers" : "") + ")";
  print_run_header(job.c_str(), o.command_line, MPI_COMM_WORLD);

  std::vector<Contender> contenders = {mpi_contender(spec, kMpiDefault, MPI_COMM_WORLD)};
  std::unique_ptr<TunedForcing> forcing;
  OwnedComms forced_comms;
  if (!o.mpi_algorithms.empty()) {
    forcing = std::make_unique<TunedForcing>(spec.tuned_variable);
    add_forced_mpi(spec, o.mpi_algorithms, *forcing, forced_comms, contenders, rank);
  }
  for (const auto& name : earlybird_algorithms(spec, o.algorithms))
    contenders.push_back(earlybird_contender(spec, name, comm, options));
  const std::unique_ptr<TunedRow> tuned = tuned_row(o, comm);
  if (tuned) {
    contenders.push_back(earlybird_contender(spec, "auto", tuned->comm, options));
    contenders.back().label = "tuned";
  }

  const Report report{spec, contenders, ranks, {o.back_to_back, o.gap_us}, o.futures, o.in_place};
  Csv csv(o.csv, Report::csv_header(), rank);
  if (rank == 0) report.print_header();
  Totals totals;
  const bool with_memory_bound = spec.kind == coll::Collective::allreduce && on_one_node();
  for (std::size_t bytes : o.sizes) {
    // 0 bytes: count 0, nothing exchanged (what a call costs beyond its data).
    const std::size_t count = bytes == 0 ? 0 : std::max<std::size_t>(1, bytes / sizeof(float));
    if (tuned) {
      const TuneReport t = tuned->comm.tune(spec.kind, count, Datatype::float32, Op::sum, tuned->options);
      if (rank == 0 && !t.chosen.empty()) std::printf("# %s: tuned: %s\n", format_bytes(t.bytes).c_str(), summary(t).c_str());
    }
    const SizeResult r =
        measure_size(spec, contenders, count, o.budget_s, rank, ranks, report.sampling,
                     {o.root, o.in_place, o.shared_buffers});
    add_to_totals(totals, contenders, r);
    std::optional<MemoryRates> rates;
    if (with_memory_bound && r.bytes >= kMemoryBoundFrom) rates = measure_memory_rates(MPI_COMM_WORLD, r.bytes, kMemoryRepetitions);
    if (rank == 0) report.print_size(r, rates);
    report.write_csv(csv, r, rates);
    std::fflush(stdout);
    progress(rank, std::string("sweep ") + spec.name + " " + format_bytes(r.bytes) + " done");
  }
  if (rank == 0)
    std::printf("# wrong results in total: %lld; earlybird algorithms that failed: %lld\n", totals.wrong,
                totals.earlybird_failures);
  return totals.exit_code();
}

}  // namespace earlybird::bench
