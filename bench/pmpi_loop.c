/* eb-pmpi-loop: an unmodified MPI program timing one blocking collective in a
 * loop, to compare Open MPI with the PMPI library preloaded (docs/benchmarks.md,
 * "Blocking calls run on the caller at any size"). Links MPI only.
 *
 *   mpirun -np P eb-pmpi-loop allreduce|reduce|bcast|allgather BYTES ITERATIONS [alloc_mem]
 *   mpirun -np P -x LD_PRELOAD=build/runtime/libearlybird_mpi.so \
 *          -x EARLYBIRD_MIN_BYTES=0 eb-pmpi-loop ...
 *
 * float32 elements, MPI_SUM, root 0 (reduce, bcast); BYTES per rank (allgather: per block).
 * Calls back to back, no barrier between them; five rounds of ITERATIONS
 * calls, the best round's time per call, the slowest rank's. After the last
 * round every rank checks its output exactly (small integers: any summation
 * order gives the same bits). Prints one line on rank 0; exit status 2 when
 * any rank's result is wrong. With `alloc_mem` the buffers come from
 * MPI_Alloc_mem (with the library and EARLYBIRD_SHARED_BUFFERS=1: memory the
 * node's peers map). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kRounds = 5 };

static float input_value(int rank, long i) { return (float)(rank + i % 7); }

static void call(const char* what, float* in, float* out, int n) {
  if (!strcmp(what, "allreduce"))
    MPI_Allreduce(in, out, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  else if (!strcmp(what, "reduce"))
    MPI_Reduce(in, out, n, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD);
  else if (!strcmp(what, "bcast"))
    MPI_Bcast(in, n, MPI_FLOAT, 0, MPI_COMM_WORLD);
  else
    MPI_Allgather(in, n, MPI_FLOAT, out, n, MPI_FLOAT, MPI_COMM_WORLD);
}

/* Elements of this rank's result that differ from what the call must give. */
static long count_wrong(const char* what, const float* in, const float* out, int n, int rank, int ranks) {
  long wrong = 0;
  if (!strcmp(what, "reduce") && rank != 0) return 0; /* only the root's output is defined */
  for (long i = 0; i < n; ++i) {
    if (!strcmp(what, "allreduce") || !strcmp(what, "reduce")) {
      float expected = 0;
      for (int r = 0; r < ranks; ++r) expected += input_value(r, i);
      wrong += out[i] != expected;
    } else if (!strcmp(what, "bcast")) {
      wrong += in[i] != input_value(0, i);
    } else {
      for (int r = 0; r < ranks; ++r) wrong += out[(long)r * n + i] != input_value(r, i);
    }
  }
  return wrong;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const int alloc_mem = argc == 5 && !strcmp(argv[4], "alloc_mem");
  if ((argc != 4 && !alloc_mem) || (strcmp(argv[1], "allreduce") && strcmp(argv[1], "reduce") && strcmp(argv[1], "bcast") &&
                    strcmp(argv[1], "allgather"))) {
    if (rank == 0) fprintf(stderr, "usage: eb-pmpi-loop allreduce|reduce|bcast|allgather BYTES ITERATIONS [alloc_mem]\n");
    MPI_Finalize();
    return 1;
  }
  const char* what = argv[1];
  const int n = atol(argv[2]) / 4 > 0 ? (int)(atol(argv[2]) / 4) : 1;
  const long iterations = atol(argv[3]) > 0 ? atol(argv[3]) : 1;
  float* in = NULL;
  float* out = NULL;
  const size_t in_bytes = sizeof(float) * (size_t)n, out_bytes = in_bytes * (size_t)ranks;
  if (alloc_mem) {
    MPI_Alloc_mem((MPI_Aint)in_bytes, MPI_INFO_NULL, &in);
    MPI_Alloc_mem((MPI_Aint)out_bytes, MPI_INFO_NULL, &out);
  } else {
    in = malloc(in_bytes);
    out = malloc(out_bytes);
  }
  for (long i = 0; i < n; ++i) in[i] = input_value(rank, i);

  double best = 1e30;
  for (int round = 0; round < kRounds; ++round) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    for (long k = 0; k < iterations; ++k) call(what, in, out, n);
    double mine = (MPI_Wtime() - start) / (double)iterations, slowest = 0;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (slowest < best) best = slowest;
  }
  long wrong = count_wrong(what, in, out, n, rank, ranks), wrong_total = 0;
  MPI_Allreduce(&wrong, &wrong_total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("%s %ld B, P = %d%s: %.2f us per call (best of %d rounds of %ld), %ld wrong\n", what, (long)n * 4, ranks,
           alloc_mem ? ", MPI_Alloc_mem buffers" : "", best * 1e6, kRounds, iterations, wrong_total);
  if (alloc_mem) {
    MPI_Free_mem(in);
    MPI_Free_mem(out);
  } else {
    free(in);
    free(out);
  }
  MPI_Finalize();
  return wrong_total ? 2 : 0;
}
