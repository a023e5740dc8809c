// eb-bench suara: SUARA (seed 003) against the flat algorithms, in the
// schedule simulator (no MPI, no mpirun). For every P and size: the grid
// suara_grid chooses under the model, the whole SUARA schedule's predicted
// time, and every flat candidate's (the ring family only up to
// coll::kSuaraLargestRingStep ranks, as in the grid search); speedup = best
// flat / SUARA. Prints a markdown table; --csv writes the same rows.
#include <earlybird/collectives/allreduce.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "format.hpp"
#include "jobs.hpp"

namespace earlybird::bench {
namespace {

constexpr std::size_t kElemBytes = 4;  // float32, as every eb-bench job

struct FlatTime {
  std::string_view algorithm;
  double seconds = -1;  // < 0: not simulated
};

struct SuaraRow {
  int ranks = 0;
  std::size_t bytes = 0;
  coll::SuaraGrid grid;
  double suara_s = 0;
  std::vector<FlatTime> flat;  // suara's candidates, in the grid search's order
  FlatTime best;
};

std::string grid_text(const coll::SuaraGrid& grid) {
  if (grid.steps.empty()) return "-";
  std::string out;
  for (const coll::SuaraStep& step : grid.steps)
    out += (out.empty() ? "" : " x ") + std::to_string(step.size) + " " + std::string(step.algorithm);
  return out;
}

double simulated(const coll::Schedule& schedule, const coll::CostModel& model) {
  return coll::simulate(schedule, kElemBytes, model).time;
}

SuaraRow row_for(int ranks, std::size_t bytes, const coll::CostModel& model) {
  const std::size_t count = bytes / kElemBytes;
  SuaraRow row{ranks, bytes, coll::suara_grid(ranks, count, kElemBytes, model), 0, {}, {}};
  row.suara_s = simulated(coll::allreduce_suara_on(row.grid, ranks, count, kElemBytes), model);
  const std::vector<std::string_view> simulable = coll::suara_step_candidates(ranks);
  row.best.seconds = std::numeric_limits<double>::max();
  for (std::string_view name : coll::kSuaraCandidates) {
    FlatTime t{name, -1};
    if (std::find(simulable.begin(), simulable.end(), name) != simulable.end())
      t.seconds = simulated(coll::find_allreduce(name)->make(ranks, count, {}, kElemBytes), model);
    if (t.seconds >= 0 && t.seconds < row.best.seconds) row.best = t;
    row.flat.push_back(t);
  }
  return row;
}

std::string us_text(double seconds) {
  if (seconds < 0) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", seconds * 1e6);
  return text;
}

void print_header(const SuaraTableOptions& o) {
  std::printf("# %s\n", o.command_line.c_str());
  std::printf("# simulated (a model, not a measurement): allreduce, float32, alpha %.3g s, beta %.3g s/B, gamma %.3g "
              "s/B, copy %.3g s/B; predicted us; '-': the ring family is not simulated above %d ranks\n",
              o.model.alpha, o.model.beta, o.model.gamma, o.model.copy_cost(), coll::kSuaraLargestRingStep);
  std::printf("| P | bytes | suara grid | suara |");
  for (std::string_view name : coll::kSuaraCandidates) std::printf(" %s |", std::string(name).c_str());
  std::printf(" best flat | speedup |\n|---:|---:|---|---:|");
  for (std::size_t i = 0; i < coll::kSuaraCandidates.size(); ++i) std::printf("---:|");
  std::printf("---|---:|\n");
}

void print_row(const SuaraRow& row) {
  std::printf("| %d | %s | %s | %s |", row.ranks, format_bytes(row.bytes).c_str(), grid_text(row.grid).c_str(),
              us_text(row.suara_s).c_str());
  for (const FlatTime& t : row.flat) std::printf(" %s |", us_text(t.seconds).c_str());
  std::printf(" %s | %.2f |\n", std::string(row.best.algorithm).c_str(), row.best.seconds / row.suara_s);
  std::fflush(stdout);
}

void write_csv(const std::string& path, const std::vector<SuaraRow>& rows) {
  if (path.empty()) return;
  std::ofstream out(path);
  out << "job,ranks,bytes,grid,suara_us,best_flat,best_flat_us,speedup";
  for (std::string_view name : coll::kSuaraCandidates) out << ',' << name << "_us";
  out << '\n';
  for (const SuaraRow& row : rows) {
    out << "suara," << row.ranks << ',' << row.bytes << ',' << grid_text(row.grid) << ',' << row.suara_s * 1e6 << ','
        << row.best.algorithm << ',' << row.best.seconds * 1e6 << ',' << row.best.seconds / row.suara_s;
    for (const FlatTime& t : row.flat) {
      out << ',';
      if (t.seconds >= 0) out << t.seconds * 1e6;
    }
    out << '\n';
  }
}

}  // namespace

int run_suara_table(const SuaraTableOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  print_header(o);
  std::vector<SuaraRow> rows;
  for (int ranks : o.ranks)
    for (std::size_t bytes : o.sizes) {
      rows.push_back(row_for(ranks, bytes, o.model));
      print_row(rows.back());
    }
  write_csv(o.csv, rows);
  std::printf("# %zu rows in %.1f s\n", rows.size(),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return 0;
}

}  // namespace earlybird::bench
