// MPI_Alloc_mem and MPI_Free_mem. With EARLYBIRD_SHARED_BUFFERS=1 (and the
// library active) the memory comes from earlybird::allocate_shared, which
// the other ranks of the node map (earlybird/shared_memory.hpp): a program
// that allocates its collective buffers with MPI_Alloc_mem then has its
// peer_reads calls load straight from the peers' buffers. Otherwise both
// pass through. MPI_Free_mem returns arena memory to the arena and passes
// anything else to MPI.
#include "failure.hpp"
#include "library.hpp"

#include <earlybird/shared_memory.hpp>

#include <exception>
#include <new>
#include <string>

#include <mpi.h>

#define EARLYBIRD_EXPORT extern "C" __attribute__((visibility("default")))

using earlybird::pmpi::Library;

namespace {

bool hands_out_shared_memory() {
  const Library& library = Library::instance();
  return library.active() && library.config().shared_buffers;
}

}  // namespace

EARLYBIRD_EXPORT int MPI_Alloc_mem(MPI_Aint size, MPI_Info info, void* baseptr) {
  if (size < 0 || baseptr == nullptr || !hands_out_shared_memory()) return PMPI_Alloc_mem(size, info, baseptr);
  try {
    *static_cast<void**>(baseptr) = earlybird::allocate_shared(static_cast<std::size_t>(size));
    return MPI_SUCCESS;
  } catch (const std::bad_alloc&) {
    return earlybird::pmpi::report_argument_error(MPI_COMM_WORLD, "MPI_Alloc_mem", MPI_ERR_NO_MEM,
                                                  "earlybird: MPI_Alloc_mem: no memory left for " +
                                                      std::to_string(size) + " bytes");
  } catch (const std::exception& e) {  // a malformed EARLYBIRD_SHARED_ARENA_GIB
    return earlybird::pmpi::report_failure(MPI_COMM_WORLD, "MPI_Alloc_mem", e.what());
  }
}

namespace {

bool from_the_arena(void* base) {
  try {
    return base != nullptr && hands_out_shared_memory() && earlybird::in_shared_arena(base);
  } catch (const std::exception&) {  // no arena could be made: nothing came from it
    return false;
  }
}

}  // namespace

EARLYBIRD_EXPORT int MPI_Free_mem(void* base) {
  if (!from_the_arena(base)) return PMPI_Free_mem(base);
  earlybird::free_shared(base);
  return MPI_SUCCESS;
}
