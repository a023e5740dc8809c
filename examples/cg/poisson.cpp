#include "poisson.hpp"

#include <algorithm>
#include <cmath>

namespace cg {

Slab Slab::of(int n, MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  Slab slab;
  slab.n = n;
  slab.comm = comm;
  // The first n % size ranks get one row more.
  const int base = n / size, extra = n % size;
  slab.rows = base + (rank < extra ? 1 : 0);
  slab.first_row = rank * base + std::min(rank, extra);
  // Ranks without rows drop out of the neighbour chain.
  auto owner_of = [&](int row) {
    if (row < 0 || row >= n) return static_cast<int>(MPI_PROC_NULL);
    const int big = (base + 1) * extra;
    return row < big ? row / (base + 1) : extra + (row - big) / base;
  };
  if (slab.rows > 0) {
    slab.up = owner_of(slab.first_row - 1);
    slab.down = owner_of(slab.first_row + slab.rows);
  }
  return slab;
}

Vector zeros(const Slab& slab) { return Vector(slab.length(), 0.0); }

Vector right_hand_side(const Slab& slab) {
  Vector b = zeros(slab);
  const double h = 1.0 / (slab.n + 1);
  std::fill(b.begin() + static_cast<std::ptrdiff_t>(slab.begin()), b.begin() + static_cast<std::ptrdiff_t>(slab.end()), h * h);
  return b;
}

namespace {

constexpr int kHaloTag = 7301;

// Ghost rows from the neighbours (zero at the domain's edges).
void exchange_halo(const Slab& slab, Vector& v) {
  if (slab.rows == 0) return;
  const int n = slab.n;
  double* first = v.data() + n;
  double* last = v.data() + static_cast<std::ptrdiff_t>(slab.rows) * n;
  double* ghost_above = v.data();
  double* ghost_below = v.data() + static_cast<std::ptrdiff_t>(slab.rows + 1) * n;
  MPI_Sendrecv(first, n, MPI_DOUBLE, slab.up, kHaloTag, ghost_below, n, MPI_DOUBLE, slab.down, kHaloTag, slab.comm,
               MPI_STATUS_IGNORE);
  MPI_Sendrecv(last, n, MPI_DOUBLE, slab.down, kHaloTag, ghost_above, n, MPI_DOUBLE, slab.up, kHaloTag, slab.comm,
               MPI_STATUS_IGNORE);
  if (slab.up == MPI_PROC_NULL) std::fill(ghost_above, ghost_above + n, 0.0);
  if (slab.down == MPI_PROC_NULL) std::fill(ghost_below, ghost_below + n, 0.0);
}

}  // namespace

void apply(const Slab& slab, Vector& v, Vector& out) {
  exchange_halo(slab, v);
  const std::ptrdiff_t n = slab.n;
  for (std::ptrdiff_t row = 1; row <= slab.rows; ++row) {
    const double* above = v.data() + (row - 1) * n;
    const double* here = v.data() + row * n;
    const double* below = v.data() + (row + 1) * n;
    double* result = out.data() + row * n;
    for (std::ptrdiff_t c = 0; c < n; ++c) {
      const double left = c > 0 ? here[c - 1] : 0.0;
      const double right = c + 1 < n ? here[c + 1] : 0.0;
      result[c] = 4.0 * here[c] - above[c] - below[c] - left - right;
    }
  }
}

double local_dot(const Slab& slab, const Vector& a, const Vector& b) {
  double sum = 0.0;
  for (std::size_t i = slab.begin(); i < slab.end(); ++i) sum += a[i] * b[i];
  return sum;
}

double true_relative_residual(const Slab& slab, Vector& x, const Vector& b) {
  Vector ax = zeros(slab);
  apply(slab, x, ax);
  double local[2] = {0.0, local_dot(slab, b, b)}, global[2];
  for (std::size_t i = slab.begin(); i < slab.end(); ++i) local[0] += (b[i] - ax[i]) * (b[i] - ax[i]);
  MPI_Allreduce(local, global, 2, MPI_DOUBLE, MPI_SUM, slab.comm);
  return std::sqrt(global[0] / global[1]);
}

}  // namespace cg
