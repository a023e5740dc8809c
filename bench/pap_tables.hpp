// eb-bench pap, tables: the results of one algorithm at one (mode, size,
// delay), the printed tables (ē, speedup over the ring, share of Δ − δ saved,
// wrong results) and the CSV rows.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "contenders.hpp"
#include "pap_baselines.hpp"
#include "pap_config.hpp"

namespace earlybird::bench::pap {

// One algorithm at one (mode, size, delay).
struct Cell {
  std::vector<double> ebar_s;  // per iteration
  long long wrong = 0;
  std::string error;  // the first failure; the algorithm is skipped afterwards
  bool ok() const { return error.empty() && !ebar_s.empty(); }
  double mean_s() const;
};

// Everything a table or CSV row needs besides the cells.
struct TableContext {
  Mode mode;
  std::size_t count;  // floats per rank
  int ranks;
  const Baselines& baselines;
  const std::vector<Contender>& contenders;
};

extern const char* const kCsvHeader;

void write_csv_rows(Csv& csv, const TableContext& t, double delay_ms, const std::vector<Cell>& cells);

// The head of one (mode, size) table: load, size, arrivals, Δ and δ, columns.
void print_table_head(const TableContext& t, const PapConfig& config);

// The rows of one delay: ē, speedup over the ring, saved share, wrong.
void print_delay_block(const TableContext& t, double delay_ms, const std::vector<Cell>& cells);

// Contenders that failed (errors[a] non-empty), before the first delay.
void print_failures(const std::vector<Contender>& contenders, const std::vector<std::string>& errors);

}  // namespace earlybird::bench::pap
