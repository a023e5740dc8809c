// The contenders eb-bench times (contenders.hpp).
#include "contenders.hpp"

#include <stdexcept>

namespace earlybird::bench {
namespace {

[[noreturn]] void throw_mpi_error(const char* function, int rc) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  throw std::runtime_error(std::string(function) + ": " + std::string(text, static_cast<std::size_t>(length)));
}

}  // namespace

Contender mpi_contender(const CollectiveSpec& spec, const std::string& label, MPI_Comm comm) {
  return {label, true, [&spec, comm](Buffers& b) {
            const int rc = spec.mpi_call(b, comm);
            if (rc != MPI_SUCCESS) throw_mpi_error(spec.mpi_function, rc);
          }};
}

Contender earlybird_contender(const CollectiveSpec& spec, const std::string& name, Communicator& comm,
                              CollectiveOptions options) {
  options.algorithm = name == "auto" ? "" : name;
  return {name, false, [&spec, &comm, options](Buffers& b) { spec.earlybird_call(comm, b, options).wait(); }};
}

}  // namespace earlybird::bench
