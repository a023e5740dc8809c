// Route: whether one intercepted collective goes to earlybird or passes
// through to the PMPI_ call unchanged. Every rank must decide alike (the
// earlybird path is collective, and creating a communicator's state is too),
// so the decision reads only what all ranks pass alike: the collective, the
// communicator, the datatype, the operator and the count — never a buffer,
// a root's private argument or rank-local state.
#pragma once

#include <earlybird/collectives/catalogue.hpp>
#include <earlybird/communicator.hpp>
#include <earlybird/types.hpp>

#include <cstddef>
#include <optional>

#include <mpi.h>

namespace earlybird::pmpi {

// One call as the decision sees it. Filled by reduction_call / movement_call.
struct CallSpec {
  coll::Collective collective = coll::Collective::allreduce;
  const char* name = "";        // "MPI_Allreduce", for logs and errors
  MPI_Comm comm = MPI_COMM_NULL;
  std::size_t count = 0;        // earlybird elements (per block for allgather, reduce_scatter)
  Datatype type = Datatype::uint8;
  Op op = Op::sum;
  std::size_t bytes = 0;        // count x element size, as the size threshold sees it
  const char* unsupported = nullptr;  // why earlybird cannot run it; nullptr: it can
};

// A reduction (allreduce, reduce, reduce_scatter): predefined integer or
// floating-point types and predefined operators defined on them.
CallSpec reduction_call(coll::Collective collective, const char* name, MPI_Comm comm, int count,
                        MPI_Datatype type, MPI_Op op);
// A data-moving collective (bcast, allgather): any predefined type without
// holes, sent as bytes.
CallSpec movement_call(coll::Collective collective, const char* name, MPI_Comm comm, int count, MPI_Datatype type);

// MPI_IN_PLACE is a send buffer only: as the receive buffer of a rank that
// receives, the call fails there before any communication (the intercepted
// calls check it first), with the class Open MPI 4.1 reports for that call:
// MPI_ERR_BUFFER for MPI_Allreduce and MPI_Iallreduce, MPI_ERR_ARG for the
// others.
bool in_place_receive(const void* recvbuf);
int report_in_place_receive(MPI_Comm comm, const char* call, int error_class);

struct Route {
  Communicator* communicator = nullptr;         // nullptr: pass through
  const CollectiveOptions* options = nullptr;   // the library's, for `blocking` calls or not
};

// Decides, logs the decision once per (call, communicator size, size class)
// with EARLYBIRD_VERBOSE=1, and on the earlybird path creates the
// communicator's state if needed (collective). `blocking`: the caller waits
// at once (CollectiveOptions::blocking). Throws earlybird::Error if creation fails.
Route route(const CallSpec& call, bool blocking);

}  // namespace earlybird::pmpi
