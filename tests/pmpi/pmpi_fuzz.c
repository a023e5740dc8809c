/* Hostile input through the PMPI library (issue 14, item 2): seeded random
 * calls of MPI_Allreduce, MPI_Reduce, MPI_Bcast, MPI_Allgather,
 * MPI_Reduce_scatter_block and MPI_Iallreduce under MPI_ERRORS_RETURN: a
 * valid call (random count, type, operator, root, MPI_IN_PLACE as sendbuf)
 * with at most one argument made invalid — a negative count, a datatype of
 * MPI_DATATYPE_NULL or a freed derived type's handle, MPI_OP_NULL or a
 * bitwise operator on floating point, a root out of range, MPI_IN_PLACE as
 * recvbuf, partially overlapping buffers, MPI_COMM_NULL. Every rank makes
 * the same call. Prints one line per case and rank: "SEED RANK KIND ok
 * DIGEST" or "SEED RANK KIND error CLASS" (KIND: which argument is invalid,
 * or "valid"), to stdout or, when EB_FUZZ_OUTPUT names a directory, to
 * DIR/rank-RANK.out (mpirun may interleave ranks' stdout mid-line). pmpi_driver.sh fuzz runs it with and without
 * libearlybird_mpi.so and requires the same outcome, case by case, except
 * that overlapping buffers (erroneous; Open MPI computes something) must be
 * an error with the library.
 *   pmpi_fuzz CASES FIRST_SEED [mismatch]
 * With "mismatch" every case is a valid call but for the last rank, which
 * calls with another count, operator or root (kind "mismatch"): erroneous,
 * and Open MPI itself hangs on it, so pmpi_driver.sh fuzz-mismatch runs it
 * with the library only and requires every rank to report (an error, or
 * completion) within the watchdog's timeout: no hang, no crash. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kMaxCount = 5000 };

static uint64_t state;
static uint64_t next_random(void) { /* splitmix64 */
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static int below(int n) { return (int)(next_random() % (uint64_t)n); }

static uint64_t digest(const unsigned char* bytes, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ bytes[i]) * 1099511628211ull;
  return h;
}

int main(int argc, char** argv) {
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  const long cases = argc > 1 ? atol(argv[1]) : 200;
  const long first = argc > 2 ? atol(argv[2]) : 1;
  const int mismatch_only = argc > 3 && strcmp(argv[3], "mismatch") == 0;
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Datatype freed;
  MPI_Type_contiguous(2, MPI_INT, &freed);
  MPI_Type_commit(&freed);
  MPI_Type_free(&freed); /* freed is now MPI_DATATYPE_NULL, as a program would hold it */
  FILE* out = stdout;
  const char* directory = getenv("EB_FUZZ_OUTPUT");
  if (directory && *directory) {
    char path[4096];
    snprintf(path, sizeof path, "%s/rank-%d.out", directory, rank);
    out = fopen(path, "w");
    if (!out) {
      fprintf(stderr, "pmpi_fuzz: cannot write %s\n", path);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  const size_t bytes = (size_t)kMaxCount * 8 * (size_t)size * 2 + 64;
  unsigned char* send = malloc(bytes);
  unsigned char* recv = malloc(bytes);
  for (long seed = first; seed < first + cases; ++seed) {
    state = (uint64_t)seed * 7919u;
    /* A valid call, then at most one argument made invalid (with two,
     * Open MPI 4.1 itself may crash: MPI_Allgather with MPI_COMM_NULL and
     * MPI_DATATYPE_NULL or MPI_IN_PLACE does). */
    const int call = below(6);
    const int counts[] = {0, 1, 3, 100, 4099, kMaxCount};
    int count = counts[below(6)];
    const MPI_Datatype types[] = {MPI_INT, MPI_DOUBLE, MPI_FLOAT, MPI_CHAR, MPI_LONG, MPI_UNSIGNED};
    const int type_index = below(6);
    MPI_Datatype type = types[type_index];
    const int floating = type_index == 1 || type_index == 2;
    const MPI_Op valid_ops[] = {MPI_SUM, MPI_MAX, MPI_MIN, MPI_PROD, MPI_BAND, MPI_BOR, MPI_LXOR};
    MPI_Op op = valid_ops[below(floating ? 4 : 7)];
    int root = below(size);
    int buffers = below(2); /* 0 separate, 1 in place as sendbuf */
    /* A communicator per case: a call that fails after communicating leaves
     * earlybird's state for its communicator refusing later calls. */
    MPI_Comm fresh;
    MPI_Comm_dup(MPI_COMM_WORLD, &fresh);
    MPI_Comm_set_errhandler(fresh, MPI_ERRORS_RETURN);
    MPI_Comm comm = fresh;
    static const char* kKinds[] = {"count", "type", "op", "root", "in_place_recv", "overlap", "comm", "valid", "mismatch"};
    int kind = below(10);
    if (kind > 7) kind = 7;
    if (mismatch_only) {
      kind = 8;
      buffers = 0;
      /* Reductions on MPI_CHAR pass through to Open MPI, which hangs on a mismatch. */
      if (type == MPI_CHAR && call != 2 && call != 3) type = MPI_INT;
      const int change = below(3); /* drawn on every rank: the streams stay aligned */
      if (rank == size - 1) {
        if (change == 0) count = count == kMaxCount ? 1 : count + 1;
        if (change == 1) op = op == MPI_SUM ? MPI_MAX : MPI_SUM;
        if (change == 2) root = (root + 1) % size;
      }
    }
    if (kind == 6 && call == 3) kind = 7; /* Open MPI 4.1's own MPI_Allgather crashes on MPI_COMM_NULL */
    /* MPI_IN_PLACE as MPI_Reduce's recvbuf is an error at the root only:
     * Open MPI then leaves the other ranks' large sends waiting forever. */
    if (kind == 4 && (call == 1 || call == 2)) kind = 7;
    switch (kind) {
      case 0: count = -1; break;
      case 1: type = below(2) ? MPI_DATATYPE_NULL : freed; break;
      case 2: op = floating && below(2) ? MPI_BAND : MPI_OP_NULL; break;
      case 3: root = below(2) ? -1 : size; break;
      case 4: buffers = 2; break; /* MPI_IN_PLACE as recvbuf */
      case 5: buffers = 3; break; /* partially overlapping buffers */
      case 6: comm = MPI_COMM_NULL, buffers = 0; break;
      default: break; /* valid */
    }
    /* Inputs: small integers in every type's bytes, the same pattern on every rank but the first word. */
    for (size_t i = 0; i < bytes; ++i) send[i] = (unsigned char)((i * 7 + (size_t)rank * 3) % 5);
    memset(recv, 0, bytes);
    void* sendbuf = send;
    void* recvbuf = recv;
    /* MPI_IN_PLACE as sendbuf: at every rank, but for MPI_Reduce at the root only. */
    if (buffers == 1 && !(call == 1 && rank != root)) sendbuf = MPI_IN_PLACE, memcpy(recv, send, bytes / 2);
    if (buffers == 2) recvbuf = MPI_IN_PLACE;
    if (buffers == 3) recvbuf = send + 4;
    int rc = MPI_SUCCESS;
    MPI_Request request;
    switch (call) {
      case 0: rc = MPI_Allreduce(sendbuf, recvbuf, count, type, op, comm); break;
      case 1: rc = MPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm); break;
      case 2: rc = MPI_Bcast(send, count, type, root, comm); break;
      case 3: rc = MPI_Allgather(sendbuf, count, type, recvbuf, count, type, comm); break;
      case 4: rc = MPI_Reduce_scatter_block(sendbuf, recvbuf, count, type, op, comm); break;
      default:
        rc = MPI_Iallreduce(sendbuf, recvbuf, count, type, op, comm, &request);
        if (rc == MPI_SUCCESS) rc = MPI_Wait(&request, MPI_STATUS_IGNORE);
    }
    if (rc == MPI_SUCCESS) {
      const unsigned char* result = call == 2 ? send : (recvbuf == MPI_IN_PLACE ? send : (unsigned char*)recvbuf);
      const int matters = !(call == 1 && rank != root); /* reduce: only the root's output is defined */
      fprintf(out, "%ld %d %s ok %016llx\n", seed, rank, kKinds[kind],
             matters ? (unsigned long long)digest(result, bytes / 2 - 64) : 0ull);
    } else {
      int error_class = -1;
      MPI_Error_class(rc, &error_class);
      char text[MPI_MAX_ERROR_STRING];
      int length = 0;
      MPI_Error_string(rc, text, &length);
      for (char* c = text; *c; ++c)
        if (*c == '\n') *c = ' ';
      fprintf(out, "%ld %d %s error %d # %s\n", seed, rank, kKinds[kind], error_class, text);
    }
    MPI_Comm_free(&fresh);
  }
  if (out != stdout) fclose(out);
  fflush(stdout);
  free(send);
  free(recv);
  MPI_Finalize();
  return 0;
}
