/* Error handling through the PMPI library, and the thread level it reports.
 * The failing call passes input and output buffers that partly overlap
 * (erroneous in MPI; earlybird rejects it on every rank before any
 * communication, so no rank waits for another).
 *   pmpi_errors return   MPI_ERRORS_RETURN: MPI_Allreduce and MPI_Iallreduce
 *                        return an error of class MPI_ERR_OTHER whose string
 *                        names the call and the cause; the communicator still works.
 *   pmpi_errors fatal    MPI_ERRORS_ARE_FATAL: the process aborts (the driver
 *                        checks the exit status and the message).
 *   pmpi_errors level    only the thread-level check (also run without the library). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

enum { kCount = 20000 };
static int buffer[kCount + 1];

static int expect_error(const char* what, int rc) {
  if (rc == MPI_SUCCESS) {
    fprintf(stderr, "FAIL: %s returned MPI_SUCCESS for overlapping buffers\n", what);
    return 1;
  }
  int error_class = 0, length = 0;
  char text[MPI_MAX_ERROR_STRING];
  MPI_Error_class(rc, &error_class);
  MPI_Error_string(rc, text, &length);
  const int named = strstr(text, what) != NULL && strstr(text, "overlap") != NULL;
  if (error_class != MPI_ERR_OTHER || !named) {
    fprintf(stderr, "FAIL: %s: class %d, string \"%s\"\n", what, error_class, text);
    return 1;
  }
  return 0;
}

static int check_thread_level(void) {
  int provided = -1;
  MPI_Query_thread(&provided);
  if (provided != MPI_THREAD_SERIALIZED) {
    fprintf(stderr, "FAIL: MPI_Query_thread reports %d, the program asked for MPI_THREAD_SERIALIZED (%d)\n", provided,
            MPI_THREAD_SERIALIZED);
    return 1;
  }
  return 0;
}

static int errors_return(void) {
  int failures = 0;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  failures += expect_error("MPI_Allreduce",
                           MPI_Allreduce(buffer, buffer + 1, kCount, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  MPI_Request request;
  int rc = MPI_Iallreduce(buffer, buffer + 1, kCount, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &request);
  if (rc == MPI_SUCCESS) rc = MPI_Wait(&request, MPI_STATUS_IGNORE);
  failures += expect_error("MPI_Iallreduce", rc);
  /* The communicator still works after a rejected call. */
  int size = 0, rank = 0, one = 1, total = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int i = 0; i < kCount; ++i) buffer[i] = rank;
  rc = MPI_Allreduce(MPI_IN_PLACE, buffer, kCount, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rc != MPI_SUCCESS || buffer[kCount - 1] != size * (size - 1) / 2) {
    fprintf(stderr, "FAIL: allreduce after the error: rc %d, value %d\n", rc, buffer[kCount - 1]);
    ++failures;
  }
  MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  return failures;
}

int main(int argc, char** argv) {
  alarm(60); /* watchdog: SIGALRM ends a hung run */
  int provided = -1;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  const char* mode = argc > 1 ? argv[1] : "level";
  int failures = 0;
  if (provided != MPI_THREAD_SERIALIZED) {
    fprintf(stderr, "FAIL: MPI_Init_thread provided %d, the program asked for MPI_THREAD_SERIALIZED\n", provided);
    ++failures;
  }
  failures += check_thread_level();
  if (strcmp(mode, "return") == 0) failures += errors_return();
  if (strcmp(mode, "fatal") == 0) {
    MPI_Allreduce(buffer, buffer + 1, kCount, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    fprintf(stderr, "FAIL: MPI_Allreduce returned under MPI_ERRORS_ARE_FATAL\n");
    ++failures;
  }
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (failures == 0) printf("pmpi_errors %s: rank %d ok\n", mode, rank);
  MPI_Finalize();
  return failures == 0 ? 0 : 1;
}
