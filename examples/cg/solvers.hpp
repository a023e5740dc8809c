// The two CG solvers eb-cg compares, on the same problem (poisson.hpp),
// from x = 0, until ||r_k|| <= tolerance * ||b|| or max_iterations.
#pragma once

#include "poisson.hpp"

#include <earlybird/communicator.hpp>

#include <vector>

namespace cg {

struct Solve {
  std::vector<double> history;  // ||r_k|| / ||b|| for k = 0 .. iterations (as the solver computed it)
  int iterations = 0;
  double seconds = 0;         // the iterations' wall time (set-up excluded)
  double reduce_seconds = 0;  // of which waiting for reductions (MPI forms only)
  Vector x;
};

struct Limits {
  double tolerance = 1e-8;
  int max_iterations = 10000;
};

// Textbook CG: two blocking MPI_Allreduce calls (8 bytes each) per iteration.
Solve blocking_cg(const Slab& slab, const Vector& b, Limits limits);

// Pipelined CG (Ghysels and Vanroose, 2014): one reduction per iteration
// (two dot products, 16 bytes), an earlybird Future, overlapped with the
// matrix-vector product, as a oneTBB flow graph.
// The same with MPI_Iallreduce, waited for after the product.
Solve pipelined_cg_mpi(const Slab& slab, const Vector& b, Limits limits);

Solve pipelined_cg(const Slab& slab, const Vector& b, Limits limits, earlybird::Communicator& comm);

}  // namespace cg
