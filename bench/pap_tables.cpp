// eb-bench pap, tables (pap_tables.hpp).
#include "pap_tables.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <sstream>
#include <thread>

#include "format.hpp"

namespace earlybird::bench::pap {
namespace {

double speedup(const Cell& ring, const Cell& alg) { return ring.mean_s() / alg.mean_s(); }

double saved_share(const Cell& ring, const Cell& alg, const Baselines& b) {
  return (ring.mean_s() - alg.mean_s()) / b.possible_saving_s();
}

std::string csv_number(double v) { return std::isnan(v) ? "nan" : fixed(v, 9); }

// Errors go into one CSV field: no commas or line breaks.
std::string csv_text(std::string text) {
  std::replace_if(
      text.begin(), text.end(), [](char c) { return c == ',' || c == '\n' || c == '\r'; }, ';');
  return text;
}

int column_width(const std::vector<Contender>& contenders) {
  std::size_t width = 10;
  for (const auto& c : contenders) width = std::max(width, c.label.size());
  return static_cast<int>(width);
}

// What the sleeps make of the arrival times (each rank sleeps base_r twice).
const char* arrival_pattern(Mode mode) {
  return mode == Mode::one_late
             ? "rank 1 sleeps 2 (base + maxDelay), the others 2 base: it arrives 2 maxDelay after them"
             : "every rank sleeps 2 base + uniform(0, maxDelay): arrivals spread over up to maxDelay";
}

// Seconds as "1.234 ms", or "n/a".
std::string ms_text(double seconds) { return std::isnan(seconds) ? "n/a" : fixed(seconds * 1e3, 3) + " ms"; }

std::string possible_saving_text(const Baselines& b) {
  if (std::isnan(b.balanced_ring_s) || std::isnan(b.small_delta_s())) return "n/a (not measured; P = 1: no transfer)";
  if (std::isnan(b.possible_saving_s())) return "n/a (Delta <= delta: nothing to save, saved shares n/a)";
  return ms_text(b.possible_saving_s());
}

// The 1, 5 and 15 minute load averages: on a shared machine, other work
// inflates every time in the table.
std::string load_average() {
  std::FILE* f = std::fopen("/proc/loadavg", "r");
  if (!f) return "unknown";
  double one = 0, five = 0, fifteen = 0;
  const bool read = std::fscanf(f, "%lf %lf %lf", &one, &five, &fifteen) == 3;
  std::fclose(f);
  return read ? fixed(one, 2) + " " + fixed(five, 2) + " " + fixed(fifteen, 2) : "unknown";
}

// One metric row of a delay's block; `value` gives a cell's text.
void print_metric(const char* delay, const char* metric, const std::vector<Cell>& cells, int width,
                  const std::function<std::string(const Cell&)>& value) {
  std::printf("%9s %-8s", delay, metric);
  for (const Cell& c : cells) std::printf(" %*s", width, c.error.empty() ? value(c).c_str() : "failed");
  std::printf("\n");
}

}  // namespace

double Cell::mean_s() const {
  if (!ok()) return kNotAvailable;
  double total = 0;
  for (double v : ebar_s) total += v;
  return total / static_cast<double>(ebar_s.size());
}

const char* const kCsvHeader =
    "job,mode,algorithm,ranks,bytes,max_delay_ms,avg_elapsed_s,speedup_vs_ring,saved_share,wrong,iterations,"
    "median_elapsed_s,min_elapsed_s,max_elapsed_s,balanced_ring_s,transfer_plus_reduction_s,transfer_s,reduction_s,"
    "mpi_transfer_s,earlybird_transfer_s,status,error";

void write_csv_rows(Csv& csv, const TableContext& t, double delay_ms, const std::vector<Cell>& cells) {
  const Cell& ring = cells[0];
  for (std::size_t a = 0; a < cells.size(); ++a) {
    const Cell& c = cells[a];
    const Stats s = stats_of(c.ebar_s);
    std::ostringstream row;
    row << "pap," << to_string(t.mode) << "," << t.contenders[a].label << "," << t.ranks << ","
        << t.count * sizeof(float) << "," << delay_ms << "," << csv_number(c.mean_s()) << ","
        << csv_number(speedup(ring, c)) << "," << csv_number(saved_share(ring, c, t.baselines)) << "," << c.wrong << ","
        << c.ebar_s.size() << "," << csv_number(c.ok() ? s.median : kNotAvailable) << ","
        << csv_number(c.ok() ? s.min : kNotAvailable) << ","
        << csv_number(c.ok() ? *std::max_element(c.ebar_s.begin(), c.ebar_s.end()) : kNotAvailable) << ","
        << csv_number(t.baselines.balanced_ring_s) << "," << csv_number(t.baselines.small_delta_s()) << ","
        << csv_number(t.baselines.transfer_s()) << "," << csv_number(t.baselines.reduction_s) << ","
        << csv_number(t.baselines.mpi_transfer_s) << "," << csv_number(t.baselines.earlybird_transfer_s) << ","
        << (c.ok() ? "ok" : "failed") << "," << csv_text(c.error);
    csv.row(row.str());
  }
}

void print_table_head(const TableContext& t, const PapConfig& config) {
  const Baselines& b = t.baselines;
  const std::size_t bytes = t.count * sizeof(float);
  std::printf("# load average (1, 5, 15 min) at the table's start: %s on %u hardware threads\n", load_average().c_str(),
              std::thread::hardware_concurrency());
  std::printf("# pap %s, %zu bytes (%s, %zu floats) per rank, P = %d, %d iterations, seed %llu\n", to_string(t.mode),
              bytes, format_bytes(bytes).c_str(), t.count, t.ranks, config.iterations,
              static_cast<unsigned long long>(config.seed));
  std::printf("# arrivals: %s\n", arrival_pattern(t.mode));
  std::printf(
      "# Delta (balanced ring, median ebar of %d) = %s; delta = transfer %s (rank 0 and rank %d, the faster of "
      "MPI_Send/Recv %s, earlybird bcast %s) + reduction %s = %s; Delta - delta = %s\n",
      config.baseline_iterations, ms_text(b.balanced_ring_s).c_str(), ms_text(b.transfer_s()).c_str(), b.partner,
      ms_text(b.mpi_transfer_s).c_str(), ms_text(b.earlybird_transfer_s).c_str(), ms_text(b.reduction_s).c_str(),
      ms_text(b.small_delta_s()).c_str(), possible_saving_text(b).c_str());
  std::printf(
      "# ebar_ms: mean over iterations of the average over ranks of the allreduce's time; x_ring: "
      "ebar_ring / ebar; saved: (ebar_ring - ebar) / (Delta - delta)\n");
  const int width = column_width(t.contenders);
  std::printf("%9s %-8s", "delay_ms", "metric");
  for (const auto& c : t.contenders) std::printf(" %*s", width, c.label.c_str());
  std::printf("\n");
}

void print_delay_block(const TableContext& t, double delay_ms, const std::vector<Cell>& cells) {
  const int width = column_width(t.contenders);
  const Cell& ring = cells[0];
  const std::string delay = fixed(delay_ms, 0);
  print_metric(delay.c_str(), "ebar_ms", cells, width, [](const Cell& c) { return fixed(c.mean_s() * 1e3, 3); });
  print_metric("", "x_ring", cells, width, [&](const Cell& c) { return fixed(speedup(ring, c), 3); });
  print_metric("", "saved", cells, width, [&](const Cell& c) { return fixed(saved_share(ring, c, t.baselines), 2); });
  print_metric("", "wrong", cells, width, [](const Cell& c) { return std::to_string(c.wrong); });
}

void print_failures(const std::vector<Contender>& contenders, const std::vector<std::string>& errors) {
  for (std::size_t a = 0; a < contenders.size(); ++a)
    if (!errors[a].empty()) std::printf("# %s failed, skipped: %s\n", contenders[a].label.c_str(), errors[a].c_str());
}

}  // namespace earlybird::bench::pap
