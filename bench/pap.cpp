// eb-bench pap: the arrival-pattern benchmark of docs (shared algorithms.md,
// "Benchmark procedure"), after Proficz 2018. Per mode, vector size, maximum
// delay and iteration, every algorithm in turn (interleaved):
//   fill the input with random values; base = (maxDelay + 100 ms) / 2;
//   one-late: rank 1 gets base_r = base + maxDelay, the others base;
//   rand-late: every rank gets base_r = base + uniform(0, maxDelay) / 2;
//   barrier; barrier; phase_begin; sleep(base_r); edge(0.5); sleep(base_r);
//   phase_end; t0; allreduce; t1; check the result;
//   ē = average over ranks of t1 - t0.
// Reported per algorithm: ē (mean over iterations), speedup ē_ring / ē_alg,
// and the share of the possible saving captured, (ē_ring - ē_alg) / (Δ - δ),
// with Δ (balanced ring) and δ (one transfer of the vector between two ranks
// plus one local reduction) measured in the same run.
#include "bench_common.hpp"
#include "jobs.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <sstream>
#include <thread>

namespace earlybird::bench {
namespace {

constexpr double kBaseExtraMs = 100.0;  // base = (maxDelay + 100 ms) / 2
constexpr const char* kRing = "ring";
constexpr const char* kMpi = "mpi";
const std::vector<std::string> kAllAlgorithms = {"ring",          "rabenseifner", "sorted_linear_tree",
                                                 "pre_reduced_ring", "arrival_chain", "arrival_prr",
                                                 "auto_pap",      "mpi"};
const double kNotAvailable = std::numeric_limits<double>::quiet_NaN();

// ---- configuration -------------------------------------------------------

enum class Mode { one_late, rand_late };

const char* to_string(Mode mode) { return mode == Mode::one_late ? "one-late" : "rand-late"; }

Mode mode_of(const std::string& name) {
  if (name == "one-late") return Mode::one_late;
  if (name == "rand-late") return Mode::rand_late;
  throw std::invalid_argument("unknown mode: " + name + " (one-late, rand-late)");
}

struct PapConfig {
  std::vector<Mode> modes;
  std::vector<double> delays_ms;
  std::vector<std::size_t> counts;  // floats per rank
  std::vector<std::string> algorithms;
  int iterations = 5;
  int baseline_iterations = 21;
  std::uint64_t seed = 1;
  std::string csv;
};

// --algorithms "all" or a list; ring is always measured (the speedups' base).
std::vector<std::string> algorithms_of(const Args& args, int rank) {
  std::vector<std::string> names = args.get("algorithms", "all") == "all" ? kAllAlgorithms : args.list("algorithms", "");
  if (std::find(names.begin(), names.end(), kRing) == names.end()) {
    names.insert(names.begin(), kRing);
    if (rank == 0) std::printf("# ring added: speedups and saved shares are relative to it\n");
  }
  return names;
}

PapConfig parse_config(const Args& args, int rank) {
  PapConfig c;
  for (const auto& m : args.list("modes", "one-late,rand-late")) c.modes.push_back(mode_of(m));
  for (const auto& d : args.list("delays", "0,1,5,10,50,100,500,1000")) c.delays_ms.push_back(std::stod(d));
  c.counts = args.sizes("sizes", "1M");  // K/M suffixes; here a count of floats, not bytes
  c.algorithms = algorithms_of(args, rank);
  c.iterations = static_cast<int>(std::max(1LL, args.get_int("iters", 5)));
  c.baseline_iterations = static_cast<int>(std::max(1LL, args.get_int("baseline-iters", 21)));
  c.seed = static_cast<std::uint64_t>(args.get_int("seed", 1));
  c.csv = args.get("csv", "");
  return c;
}

// ---- reproducible random inputs and delays --------------------------------

// An engine for one stream, named by the run's seed and a few numbers.
std::mt19937_64 engine_for(std::uint64_t seed, std::initializer_list<std::uint64_t> stream) {
  std::vector<std::uint64_t> words = {seed};
  words.insert(words.end(), stream);
  std::seed_seq sequence(words.begin(), words.end());
  return std::mt19937_64(sequence);
}

// Small integers 0..15 held in floats: every summation order gives the exact sum.
void fill_small_integers(std::mt19937_64 engine, std::span<float> out) {
  for (float& v : out) v = static_cast<float>(engine() >> 60);
}

// One iteration's input on this rank and the exact result every rank expects
// (the sum of every rank's generated values, regenerated locally).
struct IterationData {
  std::vector<float> input, expected;
};

IterationData make_iteration_data(std::uint64_t seed, std::uint64_t iteration_key, int rank, int ranks,
                                  std::size_t count) {
  IterationData d{std::vector<float>(count), std::vector<float>(count, 0.0f)};
  std::vector<float> values(count);
  for (int r = 0; r < ranks; ++r) {
    fill_small_integers(engine_for(seed, {iteration_key, static_cast<std::uint64_t>(r)}), values);
    for (std::size_t i = 0; i < count; ++i) d.expected[i] += values[i];
    if (r == rank) d.input = values;
  }
  return d;
}

// This rank's base_r in milliseconds (it sleeps base_r twice, edge(0.5) between).
double half_phase_ms(Mode mode, double max_delay_ms, int rank, std::mt19937_64& delays) {
  const double base = (max_delay_ms + kBaseExtraMs) / 2;
  if (mode == Mode::one_late) return rank == 1 ? base + max_delay_ms : base;
  return base + std::uniform_real_distribution<double>(0.0, max_delay_ms)(delays) / 2;
}

// ---- contenders ----------------------------------------------------------

// One allreduce under test: a blocking call that throws on failure.
struct Contender {
  std::string name;
  std::function<void(std::span<const float>, std::span<float>)> call;
};

Contender earlybird_contender(Communicator& comm, const std::string& name, std::chrono::milliseconds timeout) {
  CollectiveOptions options;
  options.algorithm = name;
  options.timeout = timeout;
  return {name, [&comm, options](std::span<const float> in, std::span<float> out) {
            comm.allreduce(in, out, Op::sum, options).wait();
          }};
}

[[noreturn]] void throw_mpi_error(const char* function, int rc) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  throw std::runtime_error(std::string(function) + ": " + std::string(text, static_cast<std::size_t>(length)));
}

Contender mpi_contender(MPI_Comm comm) {
  return {kMpi, [comm](std::span<const float> in, std::span<float> out) {
            const int rc = MPI_Allreduce(in.data(), out.data(), static_cast<int>(in.size()), MPI_FLOAT, MPI_SUM, comm);
            if (rc != MPI_SUCCESS) throw_mpi_error("MPI_Allreduce", rc);
          }};
}

// A duplicate of MPI_COMM_WORLD whose errors are returned, freed at the end.
struct OwnedComm {
  MPI_Comm comm = MPI_COMM_NULL;
  OwnedComm() {
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  }
  ~OwnedComm() { MPI_Comm_free(&comm); }
  OwnedComm(const OwnedComm&) = delete;
  OwnedComm& operator=(const OwnedComm&) = delete;
};

// The watchdog of every earlybird call: longer than the latest arrival can be.
std::chrono::milliseconds call_timeout(const std::vector<double>& delays_ms) {
  const double longest = delays_ms.empty() ? 0.0 : *std::max_element(delays_ms.begin(), delays_ms.end());
  return std::chrono::milliseconds(static_cast<long long>(3 * longest + 2 * kBaseExtraMs) + 60'000);
}

std::vector<Contender> make_contenders(Communicator& comm, const PapConfig& config, MPI_Comm mpi_comm) {
  std::vector<Contender> out;
  for (const auto& name : config.algorithms)
    out.push_back(name == kMpi ? mpi_contender(mpi_comm) : earlybird_contender(comm, name, call_timeout(config.delays_ms)));
  return out;
}

// ---- one call ------------------------------------------------------------

// What every rank agrees on after one call.
struct CallOutcome {
  double mean_elapsed_s = 0;  // ē of this call
  bool wrong = false;         // some rank's result differed from the oracle
  std::string error;          // non-empty: the call failed on some rank
};

bool matches(std::span<const float> out, std::span<const float> expected) {
  return std::equal(out.begin(), out.end(), expected.begin());
}

// Runs the call; returns the error text ("" on success).
std::string call_catching(const Contender& contender, const IterationData& data, std::vector<float>& out) {
  try {
    contender.call(data.input, out);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

// Averages elapsed times, and ORs wrong and failed flags, over ranks.
CallOutcome agree(double elapsed_s, bool wrong, std::string error) {
  double local[3] = {elapsed_s, wrong ? 1.0 : 0.0, error.empty() ? 0.0 : 1.0}, sum[3];
  MPI_Allreduce(local, sum, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (sum[2] > 0 && error.empty()) error = "failed on another rank";
  return {sum[0] / ranks, sum[1] > 0, std::move(error)};
}

void two_barriers() {
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
}

// The emulated compute phase, monitored as an application would be.
void compute_phase(Communicator& comm, double half_ms) {
  const std::chrono::duration<double, std::milli> half(half_ms);
  comm.phase_begin();
  std::this_thread::sleep_for(half);
  comm.edge(0.5);
  std::this_thread::sleep_for(half);
  comm.phase_end();
}

// One iteration of the procedure for one contender.
CallOutcome delayed_call(Communicator& comm, const Contender& contender, const IterationData& data, double half_ms) {
  std::vector<float> out(data.input.size(), -1.0f);
  two_barriers();
  compute_phase(comm, half_ms);
  const double t0 = MPI_Wtime();
  const std::string error = call_catching(contender, data, out);
  const double t1 = MPI_Wtime();
  const bool wrong = error.empty() && !matches(out, data.expected);
  return agree(t1 - t0, wrong, error);
}

// ---- Δ and δ --------------------------------------------------------------

struct Baselines {
  double balanced_ring_s = kNotAvailable;  // Δ
  double transfer_s = kNotAvailable;       // the vector from rank 0 to rank 1
  double reduction_s = kNotAvailable;      // one local reduction of the vector
  double small_delta_s() const { return transfer_s + reduction_s; }  // δ
  // Δ − δ when it is a usable denominator, otherwise NaN.
  double possible_saving_s() const {
    const double saving = balanced_ring_s - small_delta_s();
    return saving > 0 ? saving : kNotAvailable;
  }
};

double median_of(std::vector<double> samples) { return stats_of(std::move(samples)).median; }

// Δ: median over iterations of ē for the ring with no delay.
double balanced_ring_s(const Contender& ring, const IterationData& data, int iterations) {
  std::vector<double> ebar;
  for (int k = 0; k < iterations; ++k) {
    std::vector<float> out(data.input.size());
    two_barriers();
    const double t0 = MPI_Wtime();
    const std::string error = call_catching(ring, data, out);
    const CallOutcome o = agree(MPI_Wtime() - t0, false, error);
    if (!o.error.empty()) return kNotAvailable;
    ebar.push_back(o.mean_elapsed_s);
  }
  return median_of(ebar);
}

// Half a ping-pong of the whole vector between ranks 0 and 1 (median);
// the other ranks wait. Agreed on every rank.
double transfer_s(std::vector<float>& buffer, int iterations, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const int count = static_cast<int>(buffer.size());
  std::vector<double> half_round_trips;
  for (int k = 0; k <= iterations; ++k) {  // round 0 is a warm-up
    MPI_Barrier(comm);
    const double t0 = MPI_Wtime();
    if (rank == 0) {
      MPI_Send(buffer.data(), count, MPI_FLOAT, 1, 0, comm);
      MPI_Recv(buffer.data(), count, MPI_FLOAT, 1, 0, comm, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
      MPI_Recv(buffer.data(), count, MPI_FLOAT, 0, 0, comm, MPI_STATUS_IGNORE);
      MPI_Send(buffer.data(), count, MPI_FLOAT, 0, 0, comm);
    }
    if (k > 0) half_round_trips.push_back((MPI_Wtime() - t0) / 2);
  }
  double median = median_of(half_round_trips);
  MPI_Bcast(&median, 1, MPI_DOUBLE, 0, comm);
  return median;
}

// One reduction out = left + right with earlybird's own kernel, timed on rank 0
// while the other ranks wait (median). Agreed on every rank.
double reduction_s(std::span<const float> left, int iterations, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  double median = 0;
  if (rank == 0) {
    std::vector<float> right(left.begin(), left.end()), out(left.size());
    const ReduceOp sum(Op::sum);
    std::vector<double> samples;
    for (int k = 0; k <= iterations; ++k) {
      const double t0 = MPI_Wtime();
      sum.apply(Datatype::float32, out.data(), left.data(), right.data(), left.size());
      if (k > 0) samples.push_back(MPI_Wtime() - t0);
    }
    median = median_of(samples);
  }
  MPI_Bcast(&median, 1, MPI_DOUBLE, 0, comm);
  return median;
}

// Δ is n/a when the ring failed its warm-up; δ is n/a at P = 1 (no transfer).
Baselines measure_baselines(const Contender& ring, bool ring_works, const IterationData& data, int iterations,
                            MPI_Comm mpi_comm) {
  Baselines b;
  if (ring_works) b.balanced_ring_s = balanced_ring_s(ring, data, iterations);
  int ranks = 1;
  MPI_Comm_size(mpi_comm, &ranks);
  if (ranks < 2) return b;  // no transfer at P = 1: δ and the saved share are n/a
  std::vector<float> buffer = data.input;
  b.transfer_s = transfer_s(buffer, iterations, mpi_comm);
  b.reduction_s = reduction_s(data.input, iterations, mpi_comm);
  return b;
}

// ---- results -------------------------------------------------------------

// One algorithm at one (mode, size, delay).
struct Cell {
  std::vector<double> ebar_s;  // per iteration
  long long wrong = 0;
  std::string error;  // the first failure; the algorithm is skipped afterwards
  bool ok() const { return error.empty() && !ebar_s.empty(); }
  double mean_s() const {
    if (!ok()) return kNotAvailable;
    double total = 0;
    for (double v : ebar_s) total += v;
    return total / static_cast<double>(ebar_s.size());
  }
};

double speedup(const Cell& ring, const Cell& alg) { return ring.mean_s() / alg.mean_s(); }

double saved_share(const Cell& ring, const Cell& alg, const Baselines& b) {
  return (ring.mean_s() - alg.mean_s()) / b.possible_saving_s();
}

std::string fixed(double v, int digits) {
  if (std::isnan(v)) return "n/a";
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(digits);
  s << v;
  return s.str();
}

std::string csv_number(double v) { return std::isnan(v) ? "nan" : fixed(v, 9); }

// Errors go into one CSV field: no commas or line breaks.
std::string csv_text(std::string text) {
  std::replace_if(text.begin(), text.end(), [](char c) { return c == ',' || c == '\n' || c == '\r'; }, ';');
  return text;
}

// Everything a table or CSV row needs besides the cells.
struct TableContext {
  Mode mode;
  std::size_t count;
  int ranks;
  const Baselines& baselines;
  const std::vector<Contender>& contenders;
};

const char* kCsvHeader =
    "job,mode,algorithm,ranks,bytes,max_delay_ms,avg_elapsed_s,speedup_vs_ring,saved_share,wrong,iterations,"
    "median_elapsed_s,min_elapsed_s,max_elapsed_s,balanced_ring_s,transfer_plus_reduction_s,transfer_s,reduction_s,"
    "status,error";

void write_csv_rows(Csv& csv, const TableContext& t, double delay_ms, const std::vector<Cell>& cells) {
  const Cell& ring = cells[0];
  for (std::size_t a = 0; a < cells.size(); ++a) {
    const Cell& c = cells[a];
    const Stats s = stats_of(c.ebar_s);
    std::ostringstream row;
    row << "pap," << to_string(t.mode) << "," << t.contenders[a].name << "," << t.ranks << ","
        << t.count * sizeof(float) << "," << delay_ms << "," << csv_number(c.mean_s()) << ","
        << csv_number(speedup(ring, c)) << "," << csv_number(saved_share(ring, c, t.baselines)) << "," << c.wrong
        << "," << c.ebar_s.size() << "," << csv_number(c.ok() ? s.median : kNotAvailable) << ","
        << csv_number(c.ok() ? s.min : kNotAvailable) << ","
        << csv_number(c.ok() ? *std::max_element(c.ebar_s.begin(), c.ebar_s.end()) : kNotAvailable) << ","
        << csv_number(t.baselines.balanced_ring_s) << "," << csv_number(t.baselines.small_delta_s()) << ","
        << csv_number(t.baselines.transfer_s) << "," << csv_number(t.baselines.reduction_s) << ","
        << (c.ok() ? "ok" : "failed") << "," << csv_text(c.error);
    csv.row(row.str());
  }
}

int column_width(const std::vector<Contender>& contenders) {
  std::size_t width = 10;
  for (const auto& c : contenders) width = std::max(width, c.name.size());
  return static_cast<int>(width);
}

// What the sleeps make of the arrival times (each rank sleeps base_r twice).
const char* arrival_pattern(Mode mode) {
  return mode == Mode::one_late
             ? "rank 1 sleeps 2 (base + maxDelay), the others 2 base: it arrives 2 maxDelay after them"
             : "every rank sleeps 2 base + uniform(0, maxDelay): arrivals spread over up to maxDelay";
}

std::string possible_saving_text(const Baselines& b) {
  if (std::isnan(b.balanced_ring_s) || std::isnan(b.small_delta_s())) return "n/a (not measured)";
  if (std::isnan(b.possible_saving_s())) return "n/a (Delta <= delta: nothing to save, saved shares n/a)";
  return fixed(b.possible_saving_s() * 1e3, 3) + " ms";
}

void print_table_head(const TableContext& t, const PapConfig& config) {
  const Baselines& b = t.baselines;
  std::printf("# pap %s, %zu floats (%s) per rank, P = %d, %d iterations, seed %llu\n", to_string(t.mode), t.count,
              format_bytes(t.count * sizeof(float)).c_str(), t.ranks, config.iterations,
              static_cast<unsigned long long>(config.seed));
  std::printf("# arrivals: %s\n", arrival_pattern(t.mode));
  std::printf("# Delta (balanced ring, median ebar of %d) = %s ms; delta = transfer %s ms + reduction %s ms = %s ms; "
              "Delta - delta = %s\n",
              config.baseline_iterations, fixed(b.balanced_ring_s * 1e3, 3).c_str(), fixed(b.transfer_s * 1e3, 3).c_str(),
              fixed(b.reduction_s * 1e3, 3).c_str(), fixed(b.small_delta_s() * 1e3, 3).c_str(),
              possible_saving_text(b).c_str());
  std::printf("# ebar_ms: mean over iterations of the average over ranks of the allreduce's time; x_ring: "
              "ebar_ring / ebar; saved: (ebar_ring - ebar) / (Delta - delta)\n");
  const int width = column_width(t.contenders);
  std::printf("%9s %-8s", "delay_ms", "metric");
  for (const auto& c : t.contenders) std::printf(" %*s", width, c.name.c_str());
  std::printf("\n");
}

// One metric row of a delay's block; `value` gives a cell's text.
void print_metric(const char* delay, const char* metric, const std::vector<Cell>& cells, int width,
                  const std::function<std::string(const Cell&)>& value) {
  std::printf("%9s %-8s", delay, metric);
  for (const Cell& c : cells) std::printf(" %*s", width, c.error.empty() ? value(c).c_str() : "failed");
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
    if (!errors[a].empty()) std::printf("# %s failed, skipped: %s\n", contenders[a].name.c_str(), errors[a].c_str());
}

// ---- the loops -----------------------------------------------------------

// A number naming (mode, size, delay, iteration) for the random streams.
std::uint64_t iteration_key(std::size_t mode, std::size_t size, std::size_t delay, int iteration) {
  return ((mode * 1'000 + size) * 1'000 + delay) * 100'000 + static_cast<std::uint64_t>(iteration);
}

// An untimed, balanced call of every contender: warms it up and finds the ones
// the runtime rejects ("unknown algorithm" until they exist). Agreed on all ranks.
std::vector<std::string> warm_up(const std::vector<Contender>& contenders, const IterationData& data) {
  std::vector<std::string> errors;
  for (const auto& contender : contenders) {
    std::vector<float> out(data.input.size(), -1.0f);
    two_barriers();
    const std::string error = call_catching(contender, data, out);
    CallOutcome o = agree(0, error.empty() && !matches(out, data.expected), error);
    if (o.error.empty() && o.wrong) o.error = "wrong result in the warm-up call";
    errors.push_back(o.error);
  }
  return errors;
}

struct Totals {
  long long wrong = 0;
  long long earlybird_failures = 0;
};

// All iterations of one delay, every contender once per iteration; returns
// the cells and marks new failures in `errors`.
std::vector<Cell> run_delay(Communicator& comm, const PapConfig& config, const TableContext& t,
                            std::uint64_t key_prefix, double delay_ms, std::vector<std::string>& errors) {
  std::vector<Cell> cells(t.contenders.size());
  for (std::size_t a = 0; a < cells.size(); ++a) cells[a].error = errors[a];
  for (int k = 0; k < config.iterations; ++k) {
    const std::uint64_t key = key_prefix + static_cast<std::uint64_t>(k);
    const IterationData data = make_iteration_data(config.seed, key, comm.rank(), comm.size(), t.count);
    std::mt19937_64 delays = engine_for(config.seed, {key, static_cast<std::uint64_t>(comm.rank()), 0xde1a});
    const double half_ms = half_phase_ms(t.mode, delay_ms, comm.rank(), delays);
    for (std::size_t a = 0; a < cells.size(); ++a) {
      if (!cells[a].error.empty()) continue;
      const CallOutcome o = delayed_call(comm, t.contenders[a], data, half_ms);
      if (!o.error.empty()) {
        cells[a].error = errors[a] = o.error;
        continue;
      }
      cells[a].ebar_s.push_back(o.mean_elapsed_s);
      cells[a].wrong += o.wrong ? 1 : 0;
    }
  }
  return cells;
}

void add_wrong(Totals& totals, const std::vector<Cell>& cells) {
  for (const Cell& c : cells) totals.wrong += c.wrong;
}

long long count_failed_earlybird(const std::vector<Contender>& contenders, const std::vector<std::string>& errors) {
  long long n = 0;
  for (std::size_t a = 0; a < contenders.size(); ++a)
    if (contenders[a].name != kMpi && !errors[a].empty()) ++n;
  return n;
}

void run_table(Communicator& comm, const PapConfig& config, const Args& args, const TableContext& t,
               std::size_t mode_index, std::size_t size_index, std::vector<std::string> errors, Csv& csv,
               Totals& totals) {
  const int rank = comm.rank();
  print_run_header("pap (allreduce, float32, sum; arrival pattern, Proficz 2018)", args, MPI_COMM_WORLD);
  if (rank == 0) {
    print_table_head(t, config);
    print_failures(t.contenders, errors);
  }
  std::fflush(stdout);
  for (std::size_t d = 0; d < config.delays_ms.size(); ++d) {
    const std::vector<std::string> before = errors;
    const std::uint64_t key_prefix = iteration_key(mode_index, size_index, d, 0);
    const auto cells = run_delay(comm, config, t, key_prefix, config.delays_ms[d], errors);
    add_wrong(totals, cells);
    if (rank == 0) {
      print_delay_block(t, config.delays_ms[d], cells);
      for (std::size_t a = 0; a < errors.size(); ++a)
        if (errors[a] != before[a])
          std::printf("# %s failed at delay %s ms, skipped from here: %s\n", t.contenders[a].name.c_str(),
                      fixed(config.delays_ms[d], 0).c_str(), errors[a].c_str());
    }
    write_csv_rows(csv, t, config.delays_ms[d], cells);
    std::fflush(stdout);
    progress(rank, std::string("pap ") + to_string(t.mode) + " " + format_bytes(t.count * sizeof(float)) +
                       " delay " + fixed(config.delays_ms[d], 0) + " ms done");
  }
  totals.earlybird_failures += count_failed_earlybird(t.contenders, errors);
}

}  // namespace

int run_pap(Communicator& comm, const Args& args) {
  const PapConfig config = parse_config(args, comm.rank());
  OwnedComm mpi_comm;
  const std::vector<Contender> contenders = make_contenders(comm, config, mpi_comm.comm);  // ring first
  Csv csv(config.csv, kCsvHeader, comm.rank());
  Totals totals;
  for (std::size_t s = 0; s < config.counts.size(); ++s) {
    const std::size_t count = std::max<std::size_t>(1, config.counts[s]);
    const IterationData balanced = make_iteration_data(config.seed, ~0ull - s, comm.rank(), comm.size(), count);
    const std::vector<std::string> errors = warm_up(contenders, balanced);
    const Baselines baselines =
        measure_baselines(contenders[0], errors[0].empty(), balanced, config.baseline_iterations, mpi_comm.comm);
    for (std::size_t m = 0; m < config.modes.size(); ++m) {
      const TableContext t{config.modes[m], count, comm.size(), baselines, contenders};
      run_table(comm, config, args, t, m, s, errors, csv, totals);
    }
  }
  if (comm.rank() == 0)
    std::printf("# wrong results in total: %lld; earlybird algorithm failures (per mode and size): %lld\n",
                totals.wrong, totals.earlybird_failures);
  if (totals.wrong) return 2;
  return totals.earlybird_failures ? 3 : 0;
}

}  // namespace earlybird::bench
