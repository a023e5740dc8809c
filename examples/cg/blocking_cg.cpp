// Textbook CG (Hestenes and Stiefel), each dot product a blocking
// MPI_Allreduce: the form an MPI code has today.
#include "solvers.hpp"

#include <cmath>

namespace cg {

namespace {

// `local` summed over every rank; the time spent waiting is added to `seconds`.
double global_sum(const Slab& slab, double local, double& seconds) {
  double global = 0.0;
  const double t0 = MPI_Wtime();
  MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, slab.comm);
  seconds += MPI_Wtime() - t0;
  return global;
}

}  // namespace

Solve blocking_cg(const Slab& slab, const Vector& b, Limits limits) {
  Solve solve;
  Vector& x = solve.x = zeros(slab);
  Vector r = b, p = b, q = zeros(slab);
  const double t0 = MPI_Wtime();
  double rr = global_sum(slab, local_dot(slab, r, r), solve.reduce_seconds);
  const double b_norm = std::sqrt(rr);
  solve.history.push_back(1.0);
  while (solve.iterations < limits.max_iterations && std::sqrt(rr) > limits.tolerance * b_norm) {
    apply(slab, p, q);
    const double alpha = rr / global_sum(slab, local_dot(slab, p, q), solve.reduce_seconds);
    double local_rr = 0.0;  // (r, r) in the same pass
    for (std::size_t i = slab.begin(); i < slab.end(); ++i) {
      x[i] += alpha * p[i];
      r[i] -= alpha * q[i];
      local_rr += r[i] * r[i];
    }
    const double rr_next = global_sum(slab, local_rr, solve.reduce_seconds);
    const double beta = rr_next / rr;
    for (std::size_t i = slab.begin(); i < slab.end(); ++i) p[i] = r[i] + beta * p[i];
    rr = rr_next;
    ++solve.iterations;
    solve.history.push_back(std::sqrt(rr) / b_norm);
  }
  solve.seconds = MPI_Wtime() - t0;
  return solve;
}

}  // namespace cg
