// eb-bench plans: how long one rank takes to build its plan (no MPI, no
// mpirun), for one collective (--collective, allreduce by default; sizes
// are per rank, per block for allgather and reduce-scatter). For every P,
// algorithm and size: plan_for_rank for a few sampled
// ranks (the entries with bounds build only the rank's neighbourhood; the
// others the whole schedule), and up to --whole-up-to ranks the old way
// beside it: the whole schedule, then its projection onto rank 0. The first
// rank's plan is timed apart: it also pays what a process decides once and
// remembers (SUARA's grid), as every rank of a job does once. Prints a
// markdown table; --csv writes the same rows.
#include <earlybird/collectives/catalogue.hpp>
#include <earlybird/collectives/plan.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "collective_table.hpp"
#include "format.hpp"
#include "jobs.hpp"

namespace earlybird::bench {
namespace {

constexpr std::size_t kElemBytes = 4;  // float32, as every eb-bench job

struct PlanRow {
  int ranks = 0;
  std::string algorithm;
  std::size_t bytes = 0;
  std::size_t steps = 0;   // in rank 0's plan
  double first_ms = 0;     // rank 0's, the first plan of its kind in this process
  double rank_ms = 0;      // slowest of the other sampled ranks
  double whole_ms = -1;    // < 0: not built
};

template <class Build>
double milliseconds(Build&& build) {
  const auto start = std::chrono::steady_clock::now();
  build();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

PlanRow row_for(const coll::Algorithm& algorithm, int ranks, std::size_t bytes, const PlanBuildOptions& options) {
  const std::size_t count = bytes / kElemBytes;
  coll::AlgorithmParams params;
  params.node_ranks = options.node_ranks;
  PlanRow row{ranks, std::string(algorithm.name), bytes, 0, 0, 0, -1};
  row.first_ms = milliseconds(
      [&] { row.steps = coll::plan_for_rank(algorithm, ranks, count, params, kElemBytes, 0).steps.size(); });
  for (int rank : {ranks / 2, ranks - 1})
    row.rank_ms = std::max(
        row.rank_ms, milliseconds([&] { coll::plan_for_rank(algorithm, ranks, count, params, kElemBytes, rank); }));
  if (ranks <= options.whole_up_to)
    row.whole_ms = milliseconds([&] { coll::project(algorithm.make(ranks, count, params, kElemBytes), 0); });
  return row;
}

std::string milliseconds_text(double ms) { return ms < 0 ? "-" : fixed(ms, ms < 10 ? 2 : 0); }

}  // namespace

int run_plan_build(const PlanBuildOptions& options) {
  std::vector<PlanRow> rows;
  std::printf("| P | algorithm | bytes | steps in rank 0's plan | rank 0's plan, first in the process (ms) | "
              "per-rank plan (ms, slowest of ranks P/2, P-1) | whole schedule + projection (ms) |\n"
              "|---|---|---|---|---|---|---|\n");
  for (int ranks : options.ranks)
    for (const std::string& name : options.algorithms) {
      const coll::Collective collective = collective_spec(options.collective).kind;
      const coll::Algorithm* algorithm = coll::find_algorithm(collective, name);
      if (!algorithm) {
        std::fprintf(stderr, "eb-bench plans: no %s algorithm '%s' (%s)\n", options.collective.c_str(), name.c_str(),
                     coll::algorithm_names(collective).c_str());
        return 1;
      }
      for (std::size_t bytes : options.sizes) {
        rows.push_back(row_for(*algorithm, ranks, bytes, options));
        const PlanRow& r = rows.back();
        std::printf("| %d | %s | %s | %zu | %s | %s | %s |\n", r.ranks, r.algorithm.c_str(),
                    format_bytes(r.bytes).c_str(), r.steps, milliseconds_text(r.first_ms).c_str(),
                    milliseconds_text(r.rank_ms).c_str(), milliseconds_text(r.whole_ms).c_str());
        std::fflush(stdout);
      }
    }
  if (!options.csv.empty()) {
    std::ofstream csv(options.csv);
    csv << "ranks,algorithm,bytes,steps,first_plan_ms,rank_plan_ms,whole_ms\n";
    for (const PlanRow& r : rows)
      csv << r.ranks << ',' << r.algorithm << ',' << r.bytes << ',' << r.steps << ',' << r.first_ms << ','
          << r.rank_ms << ',' << r.whole_ms << '\n';
  }
  return 0;
}

}  // namespace earlybird::bench
