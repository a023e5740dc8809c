// MPI tier: a program that initialised MPI without MPI_THREAD_MULTIPLE gets a
// clear error from Runtime (naming the level it has and the one it needs),
// not a crash or a silent data race.
#include <earlybird/earlybird.hpp>

#include <cstdio>
#include <string>

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int failed = 0;
  if (provided >= MPI_THREAD_MULTIPLE) {
    std::printf("rank %d: the MPI library upgraded FUNNELED to MULTIPLE; nothing to check\n", rank);
  } else {
    std::string message;
    try {
      earlybird::Runtime runtime(&argc, &argv);
    } catch (const earlybird::Error& e) {
      message = e.what();
    }
    const bool ok = message.find("MPI_THREAD_MULTIPLE") != std::string::npos &&
                    message.find("MPI_THREAD_FUNNELED") != std::string::npos;
    if (!ok) std::fprintf(stderr, "FAIL rank %d: unclear or missing error: '%s'\n", rank, message.c_str());
    failed = ok ? 0 : 1;
  }
  int any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0) std::printf("test_mpi_thread_level: %d passed, %d failed\n", any ? 0 : 1, any ? 1 : 0);
  MPI_Finalize();
  return any;
}
