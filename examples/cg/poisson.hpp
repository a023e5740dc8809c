// The 2D Poisson problem of eb-cg: -Δu = 1 on the unit square, u = 0 on the
// boundary, the five-point stencil on an n x n grid of interior points. The
// grid's rows are split over the ranks in contiguous slabs; a vector holds
// its slab plus one ghost row above and one below (halo), which apply()
// fills from the neighbouring ranks with MPI point-to-point messages.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <vector>

namespace cg {

// This rank's slab of the grid.
struct Slab {
  int n = 0;          // grid points per row (and rows in all)
  int first_row = 0;  // global index of the slab's first row
  int rows = 0;       // rows in this slab (may be 0 when ranks > n)
  int up = MPI_PROC_NULL, down = MPI_PROC_NULL;  // neighbours holding rows first_row-1 and first_row+rows
  MPI_Comm comm = MPI_COMM_NULL;

  static Slab of(int n, MPI_Comm comm);
  // Elements of a vector: the slab plus two ghost rows.
  std::size_t length() const { return static_cast<std::size_t>(rows + 2) * static_cast<std::size_t>(n); }
  // The slab's own elements are [begin(), end()).
  std::size_t begin() const { return static_cast<std::size_t>(n); }
  std::size_t end() const { return static_cast<std::size_t>(rows + 1) * static_cast<std::size_t>(n); }
};

using Vector = std::vector<double>;

Vector zeros(const Slab& slab);
// The right-hand side h^2 * f with f = 1 (the stencil is not scaled by 1/h^2).
Vector right_hand_side(const Slab& slab);
// out = A v on the slab; fills v's ghost rows first (neighbour exchange).
void apply(const Slab& slab, Vector& v, Vector& out);
// This rank's part of (a, b).
double local_dot(const Slab& slab, const Vector& a, const Vector& b);
// ||b - A x|| / ||b|| over every rank (MPI_Allreduce): the true residual.
double true_relative_residual(const Slab& slab, Vector& x, const Vector& b);

}  // namespace cg
