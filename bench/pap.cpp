// eb-bench pap: the arrival-pattern benchmark, after Proficz 2018; the
// procedure is docs/benchmarks.md "The arrival-pattern benchmark (`eb-bench
// pap`)", the algorithms docs/algorithms.md "Arrival-pattern-aware allreduce
// (Proficz 2018)". This file holds the loops. Per vector size, mode, maximum
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
// plus one local reduction) measured in the same run. The pieces:
// pap_config (settings), pap_inputs (random inputs and delays), pap_calls
// (contenders and one call), pap_baselines (Δ and δ), pap_tables (output).
#include <cstdio>

#include "bench_common.hpp"
#include "format.hpp"
#include "jobs.hpp"
#include "pap_baselines.hpp"
#include "pap_calls.hpp"
#include "pap_config.hpp"
#include "pap_inputs.hpp"
#include "pap_tables.hpp"

namespace earlybird::bench {
namespace pap {
namespace {

// All iterations of one delay, every contender once per iteration with the
// same input and delays; the order rotates by one contender per iteration,
// so no algorithm always runs first. Returns the cells and marks new
// failures in `errors`.
std::vector<Cell> run_delay(Communicator& comm, const PapConfig& config, const TableContext& t, Buffers& data,
                            std::uint64_t key_prefix, double delay_ms, std::vector<std::string>& errors) {
  std::vector<Cell> cells(t.contenders.size());
  for (std::size_t a = 0; a < cells.size(); ++a) cells[a].error = errors[a];
  for (int k = 0; k < config.iterations; ++k) {
    const std::uint64_t key = key_prefix + static_cast<std::uint64_t>(k);
    refill(data, config.seed, key, comm.rank(), comm.size());
    std::mt19937_64 delays = engine_for(config.seed, {key, static_cast<std::uint64_t>(comm.rank()), 0xde1a});
    const double half_ms = half_phase_ms(t.mode, delay_ms, comm.rank(), delays);
    for (std::size_t j = 0; j < cells.size(); ++j) {
      const std::size_t a = (j + static_cast<std::size_t>(k)) % cells.size();
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
    if (!contenders[a].is_mpi && !errors[a].empty()) ++n;
  return n;
}

void print_new_failures(const TableContext& t, double delay_ms, const std::vector<std::string>& before,
                        const std::vector<std::string>& errors) {
  for (std::size_t a = 0; a < errors.size(); ++a)
    if (errors[a] != before[a])
      std::printf("# %s failed at delay %s ms, skipped from here: %s\n", t.contenders[a].label.c_str(),
                  fixed(delay_ms, 0).c_str(), errors[a].c_str());
}

void run_table(Communicator& comm, const PapConfig& config, const TableContext& t, Buffers& data,
               std::size_t mode_index, std::size_t size_index, std::vector<std::string> errors, Csv& csv,
               Totals& totals) {
  const int rank = comm.rank();
  print_run_header("pap (allreduce, float32, sum; arrival pattern, Proficz 2018)", config.command_line, MPI_COMM_WORLD);
  if (rank == 0) {
    print_table_head(t, config);
    print_failures(t.contenders, errors);
  }
  std::fflush(stdout);
  for (std::size_t d = 0; d < config.delays_ms.size(); ++d) {
    const std::vector<std::string> before = errors;
    const std::uint64_t key_prefix = iteration_key(mode_index, size_index, d, 0);
    const auto cells = run_delay(comm, config, t, data, key_prefix, config.delays_ms[d], errors);
    add_wrong(totals, cells);
    if (rank == 0) {
      print_delay_block(t, config.delays_ms[d], cells);
      print_new_failures(t, config.delays_ms[d], before, errors);
    }
    write_csv_rows(csv, t, config.delays_ms[d], cells);
    std::fflush(stdout);
    progress(rank, std::string("pap ") + to_string(t.mode) + " " + format_bytes(t.count * sizeof(float)) + " delay " +
                       fixed(config.delays_ms[d], 0) + " ms done");
  }
  totals.earlybird_failures += count_failed_earlybird(t.contenders, errors);
}

}  // namespace
}  // namespace pap

int run_pap(Communicator& comm, const PapOptions& options) {
  using namespace pap;
  const PapConfig config = make_config(options, comm.rank());
  OwnedComm mpi_comm;
  const std::vector<Contender> contenders = make_contenders(comm, config, mpi_comm.comm);  // ring first
  Csv csv(config.csv, kCsvHeader, comm.rank());
  Totals totals;
  for (std::size_t s = 0; s < config.counts.size(); ++s) {
    const std::size_t count = config.counts[s];
    Buffers data = make_pap_buffers(count, comm.rank(), comm.size());
    refill(data, config.seed, ~0ull - s, comm.rank(), comm.size());
    const std::vector<std::string> errors = warm_up(contenders, data);
    const Baselines baselines =
        measure_baselines(comm, contenders[0], errors[0].empty(), data, config.baseline_iterations, mpi_comm.comm);
    for (std::size_t m = 0; m < config.modes.size(); ++m) {
      const TableContext t{config.modes[m], count, comm.size(), baselines, contenders};
      run_table(comm, config, t, data, m, s, errors, csv, totals);
    }
  }
  if (comm.rank() == 0)
    std::printf("# wrong results in total: %lld; earlybird algorithm failures (per mode and size): %lld\n",
                totals.wrong, totals.earlybird_failures);
  return totals.exit_code();
}

}  // namespace earlybird::bench
