// eb-bench dsop: the sum of outer products (seed 004) — every algorithm of
// Communicator::sum_outer_products, and auto, against the naive baseline
// (each rank's a b^T computed locally, then MPI_Allreduce of the N x M
// matrix in place), float32, N = M from --dims. Per contender and size: one
// untimed call, then --iters timed; a call's time is its slowest rank's; the
// table gives the median, the ratio to the baseline's median, and the model's
// prediction (coll::predict_outer_products with EARLYBIRD_PROFILE or the
// defaults, at the level the ranks are on). Inputs are small integers, so
// every algorithm's result is exact; each contender's last result is
// compared with the exact sum.
#include <earlybird/collectives/outer_products.hpp>

#include <algorithm>
#include <cstdlib>
#include <functional>

#include "bench_common.hpp"
#include "format.hpp"
#include "jobs.hpp"

namespace earlybird::bench {
namespace {

float a_of(int rank, std::size_t i) { return static_cast<float>((rank * 7 + static_cast<int>(i % 23) * 3) % 17 - 5); }
float b_of(int rank, std::size_t j) { return static_cast<float>((rank * 5 + static_cast<int>(j % 19) * 11) % 13 - 6); }

struct Problem {
  std::size_t n = 0;
  std::vector<float> a, b, g, expected;
};

Problem problem_of(std::size_t n, int rank, int ranks) {
  Problem p;
  p.n = n;
  p.a.resize(n);
  p.b.resize(n);
  p.g.resize(n * n);
  for (std::size_t i = 0; i < n; ++i) p.a[i] = a_of(rank, i), p.b[i] = b_of(rank, i);
  p.expected.assign(n * n, 0.0f);
  for (int r = 0; r < ranks; ++r)
    for (std::size_t i = 0; i < n; ++i) {
      const float a = a_of(r, i);
      for (std::size_t j = 0; j < n; ++j) p.expected[i * n + j] += a * b_of(r, j);
    }
  return p;
}

// The naive baseline: the local product, then MPI_Allreduce of the matrix.
void mpi_baseline(Problem& p) {
  for (std::size_t i = 0; i < p.n; ++i)
    for (std::size_t j = 0; j < p.n; ++j) p.g[i * p.n + j] = p.a[i] * p.b[j];
  MPI_Allreduce(MPI_IN_PLACE, p.g.data(), static_cast<int>(p.n * p.n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
}

std::vector<std::string> contenders_of(const std::vector<std::string>& requested) {
  std::vector<std::string> names;
  if (requested.empty() || requested == std::vector<std::string>{"all"}) {
    names.push_back("auto");
    for (auto a : coll::outer_product_algorithms()) names.emplace_back(coll::to_string(a));
  } else {
    names = requested;
  }
  names.push_back("mpi");
  return names;
}

struct Row {
  std::string label;
  Stats stats;
  double predicted = -1;  // s; < 0: no prediction
  long long wrong = 0;
};

const coll::LevelCosts& level_costs(bool node) {
  static const coll::MachineProfile profile = [] {
    const char* path = std::getenv("EARLYBIRD_PROFILE");
    return path && *path ? coll::read_profile(path) : coll::default_profile();
  }();
  return node ? profile.node : profile.network;
}

}  // namespace

int run_dsop(Communicator& comm, const DsopOptions& o) {
  const int rank = comm.rank(), ranks = comm.size();
  print_run_header("dsop", o.command_line, MPI_COMM_WORLD);
  const bool node = on_one_node();
  Csv csv(o.csv, "n,algorithm,median_s,min_s,ratio_to_mpi,predicted_s,wrong", rank);
  if (rank == 0)
    std::printf("# float32, %s level; time = slowest rank, median of %d calls; ratio = median / MPI baseline's\n"
                "%6s  %-26s %11s %11s %8s %13s %6s\n",
                node ? "node" : "network", o.iterations, "N", "algorithm", "median ms", "min ms", "ratio",
                "predicted ms", "wrong");
  Totals totals;
  for (std::size_t n : o.dims) {
    Problem p = problem_of(n, rank, ranks);
    const auto predictions = coll::predict_outer_products(ranks, n, n, sizeof(float), level_costs(node));
    std::vector<Row> rows;
    double mpi_median = 0;
    for (const std::string& name : contenders_of(o.algorithms)) {
      CollectiveOptions options;
      options.algorithm = name == "auto" ? "" : name;
      std::function<void()> call = [&] { mpi_baseline(p); };
      if (name != "mpi") call = [&] { comm.sum_outer_products<float>(p.a, p.b, p.g, options).wait(); };
      std::vector<double> times;
      bool failed = false;
      for (int it = 0; it <= o.iterations; ++it) {
        std::fill(p.g.begin(), p.g.end(), -1.0f);
        MPI_Barrier(MPI_COMM_WORLD);
        const double start = MPI_Wtime();
        try {
          call();
        } catch (const std::exception& e) {
          std::fprintf(stderr, "eb-bench dsop: rank %d: %s\n", rank, e.what());
          failed = true;
          break;
        }
        if (it > 0) times.push_back(MPI_Wtime() - start);
      }
      if (failed) {
        ++totals.earlybird_failures;
        continue;
      }
      const Stats s = stats_of(max_over_ranks(times, MPI_COMM_WORLD));
      const long long wrong = wrong_iterations({p.g == p.expected ? 0.0 : 1.0});
      totals.wrong += wrong;
      if (name == "mpi") mpi_median = s.median;
      double predicted = -1;
      const auto chosen = name == "auto" ? std::optional(predictions.front().algorithm)
                                         : coll::find_outer_product_algorithm(name);
      for (const auto& prediction : predictions)
        if (chosen && prediction.algorithm == *chosen) predicted = prediction.seconds;
      rows.push_back({name + (name == "auto" && chosen ? " (" + std::string(coll::to_string(*chosen)) + ")" : ""), s,
                      predicted, wrong});
    }
    for (const Row& row : rows) {
      const double ratio = mpi_median > 0 ? row.stats.median / mpi_median : 0;
      if (rank == 0)
        std::printf("%6zu  %-26s %11.2f %11.2f %8.2f %13s %6lld\n", n, row.label.c_str(), row.stats.median * 1e3,
                    row.stats.min * 1e3, ratio, row.predicted < 0 ? "-" : fixed(row.predicted * 1e3, 2).c_str(),
                    row.wrong);
      csv.row(std::to_string(n) + "," + row.label + "," + std::to_string(row.stats.median) + "," +
              std::to_string(row.stats.min) + "," + std::to_string(ratio) + "," + std::to_string(row.predicted) + "," +
              std::to_string(row.wrong));
    }
    progress(rank, "dsop N = " + std::to_string(n) + " done");
  }
  return totals.exit_code();
}

}  // namespace earlybird::bench
