// MPI_Init, MPI_Init_thread, MPI_Query_thread and MPI_Finalize of the PMPI
// library: MPI is initialised with MPI_THREAD_MULTIPLE (earlybird's progress
// thread calls MPI while the program may) and the program is told the level
// it asked for; earlybird starts after PMPI_Init_thread and stops before
// PMPI_Finalize.
#include "../config/environment.hpp"
#include "library.hpp"

#include <earlybird/future.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include <mpi.h>

#define EARLYBIRD_EXPORT extern "C" __attribute__((visibility("default")))

namespace earlybird::pmpi {
namespace {

int init(int* argc, char*** argv, int required, int* provided) {
  const bool disabled = config::pmpi_disabled_by_environment();
  if (!disabled) config::prepare_mpi_environment();
  int given = MPI_THREAD_SINGLE;
  const int rc = PMPI_Init_thread(argc, argv, disabled ? required : MPI_THREAD_MULTIPLE, &given);
  if (rc != MPI_SUCCESS) return rc;
  try {
    Library::instance().start(required, given);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "earlybird: MPI_Init: %s\n", e.what());
    std::fflush(stderr);
    PMPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (provided) *provided = Library::instance().reported_thread_level();
  return rc;
}

}  // namespace
}  // namespace earlybird::pmpi

using earlybird::pmpi::Library;

EARLYBIRD_EXPORT int MPI_Init(int* argc, char*** argv) {
  return earlybird::pmpi::init(argc, argv, MPI_THREAD_SINGLE, nullptr);
}

EARLYBIRD_EXPORT int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  return earlybird::pmpi::init(argc, argv, required, provided);
}

EARLYBIRD_EXPORT int MPI_Query_thread(int* provided) {
  const int rc = PMPI_Query_thread(provided);
  if (rc == MPI_SUCCESS) *provided = std::min(*provided, Library::instance().reported_thread_level());
  return rc;
}

EARLYBIRD_EXPORT int MPI_Finalize(void) {
  try {
    Library::instance().stop();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "earlybird: MPI_Finalize: %s\n", e.what());
  }
  return PMPI_Finalize();
}
