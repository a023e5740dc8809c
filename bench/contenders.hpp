// The things eb-bench times, shared by its jobs: one blocking call of an
// earlybird algorithm or of the MPI library's matching collective, on the
// buffers of collective_table.hpp. A call throws on failure.
#pragma once

#include <mpi.h>

#include <earlybird/earlybird.hpp>
#include <functional>
#include <string>

#include "collective_table.hpp"

namespace earlybird::bench {

struct Contender {
  std::string label;  // "ring", "auto", "mpi:default", "mpi:ring", "mpi"
  bool is_mpi = false;
  std::function<void(Buffers&)> call;  // one blocking call; throws on failure
};

// The MPI library's collective of `spec` on `comm`; an MPI error becomes an
// exception "MPI_Allreduce: <MPI's error string>".
Contender mpi_contender(const CollectiveSpec& spec, const std::string& label, MPI_Comm comm);

// earlybird's algorithm `name` ("auto": earlybird chooses) with `options`
// otherwise as given; waits for the call's future.
Contender earlybird_contender(const CollectiveSpec& spec, const std::string& name, Communicator& comm,
                              CollectiveOptions options);

}  // namespace earlybird::bench
