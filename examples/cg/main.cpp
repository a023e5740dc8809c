// eb-cg: the same 2D Poisson problem solved three ways: textbook CG with
// blocking MPI_Allreduce; pipelined CG with MPI_Iallreduce overlapping the
// matrix-vector product; pipelined CG as a oneTBB flow graph over an
// earlybird persistent allreduce. Prints iterations, time per iteration and
// the residuals of each, and checks them (exit status 1 if a check fails).
//
//   mpirun -n 2 eb-cg [--n 64] [--tol 1e-8] [--max-iter 10000] [--repeat 5]
//                     [--threads T]
// --repeat: solves per form, alternating; the fastest of each is reported.
// --threads: oneTBB threads per rank (default: oneTBB's choice).
#include "../common/machine_line.hpp"
#include "../common/options.hpp"
#include "solvers.hpp"

#include <earlybird/runtime.hpp>

#include <oneapi/tbb/global_control.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>

namespace {

struct Config {
  int n = 64;
  cg::Limits limits;
  int repeat = 5;
  int threads = 0;
};

Config read_config(int argc, char** argv) {
  examples::Options options(argc, argv);
  Config config;
  config.n = static_cast<int>(options.integer("n", config.n));
  config.limits.tolerance = options.number("tol", config.limits.tolerance);
  config.limits.max_iterations = static_cast<int>(options.integer("max-iter", config.limits.max_iterations));
  config.repeat = static_cast<int>(options.integer("repeat", config.repeat));
  config.threads = static_cast<int>(options.integer("threads", 0));
  options.no_others();
  if (config.n < 1 || config.repeat < 1 || config.limits.max_iterations < 1 || config.limits.tolerance <= 0)
    throw std::invalid_argument("--n, --repeat and --max-iter must be positive, --tol above 0");
  return config;
}

// The largest ratio of the two residual histories over their common
// iterations (1: identical).
double history_spread(const cg::Solve& a, const cg::Solve& b) {
  double worst = 1.0;
  const std::size_t common = std::min(a.history.size(), b.history.size());
  for (std::size_t k = 0; k < common; ++k) {
    const double ratio = a.history[k] / b.history[k];
    worst = std::max(worst, std::max(ratio, 1.0 / ratio));
  }
  return worst;
}

void print_header(const Config& config, int ranks, int local_ranks) {
  std::printf("eb-cg: 2D Poisson, n = %d (%lld unknowns), tolerance %.1e\n", config.n,
              static_cast<long long>(config.n) * config.n, config.limits.tolerance);
  examples::print_machine_line(ranks, local_ranks);
}

void print_row(const char* form, const cg::Solve& s, double true_residual) {
  const double per_iteration = s.iterations > 0 ? s.seconds / s.iterations * 1e6 : 0.0;
  std::printf("%-32s %10d %16.2f %14s %19.2e\n", form, s.iterations, per_iteration,
              s.reduce_seconds > 0 ? (std::to_string(static_cast<int>(std::lround(100 * s.reduce_seconds / s.seconds))) + " %").c_str() : "-",
              true_residual);
}

}  // namespace

int main(int argc, char** argv) {
  earlybird::Runtime runtime(&argc, &argv);
  int code = 0;
  {
    earlybird::Communicator world = runtime.world();
    Config config;
    try {
      config = read_config(argc, argv);
    } catch (const std::exception& e) {
      if (world.rank() == 0) std::fprintf(stderr, "eb-cg: %s\n", e.what());
      return 2;
    }
    std::unique_ptr<oneapi::tbb::global_control> threads;
    if (config.threads > 0)
      threads = std::make_unique<oneapi::tbb::global_control>(oneapi::tbb::global_control::max_allowed_parallelism,
                                                              static_cast<std::size_t>(config.threads));
    const cg::Slab slab = cg::Slab::of(config.n, MPI_COMM_WORLD);
    const cg::Vector b = cg::right_hand_side(slab);

    cg::Solve blocking, pipelined_mpi, pipelined;
    auto keep_fastest = [&](int round, cg::Solve one, cg::Solve& best) {
      if (round == 0 || one.seconds < best.seconds) best = std::move(one);
    };
    for (int round = 0; round < config.repeat; ++round) {
      MPI_Barrier(MPI_COMM_WORLD);
      keep_fastest(round, cg::blocking_cg(slab, b, config.limits), blocking);
      MPI_Barrier(MPI_COMM_WORLD);
      keep_fastest(round, cg::pipelined_cg_mpi(slab, b, config.limits), pipelined_mpi);
      MPI_Barrier(MPI_COMM_WORLD);
      keep_fastest(round, cg::pipelined_cg(slab, b, config.limits, world), pipelined);
    }
    const double blocking_residual = cg::true_relative_residual(slab, blocking.x, b);
    const double pipelined_mpi_residual = cg::true_relative_residual(slab, pipelined_mpi.x, b);
    const double pipelined_residual = cg::true_relative_residual(slab, pipelined.x, b);
    const double spread = history_spread(blocking, pipelined);

    // Converged to the tolerance (true residual within 10x: pipelined CG's
    // recurrences drift from the true residual by rounding), the same
    // iteration count +-1.
    const double tol = config.limits.tolerance;
    auto converged_to = [tol](const cg::Solve& s, double true_residual) {
      return s.history.back() <= tol && true_residual <= 10 * tol;
    };
    const bool converged = converged_to(blocking, blocking_residual) &&
                           converged_to(pipelined_mpi, pipelined_mpi_residual) &&
                           converged_to(pipelined, pipelined_residual);
    const bool same_count = std::abs(blocking.iterations - pipelined.iterations) <= 1 &&
                            std::abs(blocking.iterations - pipelined_mpi.iterations) <= 1;
    if (world.rank() == 0) {
      print_header(config, world.size(), runtime.local_ranks());
      std::printf("%-32s %10s %16s %14s %19s\n", "form", "iterations", "time/iter (us)", "waiting",
                  "true residual");
      print_row("blocking CG, MPI_Allreduce", blocking, blocking_residual);
      print_row("pipelined CG, MPI_Iallreduce", pipelined_mpi, pipelined_mpi_residual);
      print_row("pipelined CG, earlybird graph", pipelined, pipelined_residual);
      auto per_iteration = [](const cg::Solve& s) { return s.seconds / std::max(1, s.iterations); };
      std::printf("time per iteration against blocking CG (fastest of %d solves each): "
                  "pipelined MPI %.2f, pipelined earlybird %.2f\n",
                  config.repeat, per_iteration(pipelined_mpi) / per_iteration(blocking),
                  per_iteration(pipelined) / per_iteration(blocking));
      std::printf("residual histories: largest relative difference over %zu common iterations %.2e\n",
                  std::min(blocking.history.size(), pipelined.history.size()), spread - 1.0);
      std::printf("check: %s (converged: %s, iteration counts within 1: %s)\n",
                  converged && same_count ? "ok" : "FAILED", converged ? "yes" : "no", same_count ? "yes" : "no");
    }
    code = converged && same_count ? 0 : 1;
  }
  return code;
}
