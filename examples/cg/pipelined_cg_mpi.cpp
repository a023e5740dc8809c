// Pipelined CG (pipelined_recurrences.hpp) the way an MPI code overlaps it
// today: MPI_Iallreduce of the local dots, q = A w, MPI_Wait.
#include "pipelined_recurrences.hpp"

namespace cg {

Solve pipelined_cg_mpi(const Slab& slab, const Vector& b, Limits limits) {
  Solve solve;
  Recurrences state(slab, b, limits);
  const double t0 = MPI_Wtime();
  state.start();
  for (int i = 0;; ++i) {
    MPI_Request request;
    MPI_Iallreduce(state.dots().data(), state.reduced().data(), 2, MPI_DOUBLE, MPI_SUM, slab.comm, &request);
    state.product();
    const double t1 = MPI_Wtime();
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    solve.reduce_seconds += MPI_Wtime() - t1;
    if (!state.step(i, solve.history)) {
      solve.iterations = i;
      break;
    }
  }
  solve.seconds = MPI_Wtime() - t0;
  solve.x = state.x();
  return solve;
}

}  // namespace cg
