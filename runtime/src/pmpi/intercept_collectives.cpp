// The intercepted blocking collectives. Each describes its call (CallSpec),
// asks route() whether earlybird runs it, and either passes the call through
// to PMPI_ unchanged or runs it on earlybird and waits, turning a failure into
// the communicator's error handler. MPI_IN_PLACE follows the standard:
// allreduce, allgather and reduce_scatter_block take it on every rank, reduce
// at the root only (recvbuf counts only there), bcast is always in place.
#include "failure.hpp"
#include "route.hpp"

#include <earlybird/future.hpp>

#include <exception>

#include <mpi.h>

#define EARLYBIRD_EXPORT extern "C" __attribute__((visibility("default")))

namespace earlybird::pmpi {
namespace {

using coll::Collective;

// Whether `call` goes to earlybird; route() also creates the state, so this
// asks once and hands the answer on.
struct Decided {
  Route route;
  int error = MPI_SUCCESS;
};

Decided decide(const CallSpec& call) {
  try {
    return {route(call, true)};  // the caller waits right away: run it on this thread at any size
  } catch (const std::exception& e) {
    return {{}, report_failure(call.comm, call.name, e.what())};
  }
}

int wait_for(const CallSpec& call, const Future& future) {
  try {
    future.wait();
    return MPI_SUCCESS;
  } catch (const std::exception& e) {
    return report_failure(call.comm, call.name, e.what());
  }
}

bool in_place(const void* buffer) { return buffer == MPI_IN_PLACE; }

int my_rank(MPI_Comm comm) {
  int rank = 0;
  PMPI_Comm_rank(comm, &rank);
  return rank;
}

bool valid_root(MPI_Comm comm, int root) {
  int size = 0;
  PMPI_Comm_size(comm, &size);
  return root >= 0 && root < size;
}

}  // namespace
}  // namespace earlybird::pmpi

using namespace earlybird::pmpi;  // NOLINT: the MPI_ entry points below are C

EARLYBIRD_EXPORT int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                                   MPI_Comm comm) {
  if (in_place_receive(recvbuf)) return report_in_place_receive(comm, "MPI_Allreduce", MPI_ERR_BUFFER);
  const CallSpec call = reduction_call(Collective::allreduce, "MPI_Allreduce", comm, count, datatype, op);
  const Decided decided = decide(call);
  if (decided.error != MPI_SUCCESS) return decided.error;
  if (!decided.route.communicator) return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
  const void* input = in_place(sendbuf) ? recvbuf : sendbuf;
  return wait_for(call, decided.route.communicator->allreduce(input, recvbuf, call.count, call.type, call.op,
                                                              *decided.route.options));
}

EARLYBIRD_EXPORT int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                                int root, MPI_Comm comm) {
  CallSpec call = reduction_call(Collective::reduce, "MPI_Reduce", comm, count, datatype, op);
  if (!call.unsupported && !valid_root(comm, root)) call.unsupported = "root is not a rank (MPI reports it)";
  if (!call.unsupported && in_place_receive(recvbuf) && my_rank(comm) == root)
    return report_in_place_receive(comm, "MPI_Reduce", MPI_ERR_ARG);
  const Decided decided = decide(call);
  if (decided.error != MPI_SUCCESS) return decided.error;
  if (!decided.route.communicator) return PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
  const bool root_here = my_rank(comm) == root;
  // MPI_IN_PLACE is only valid at the root; elsewhere earlybird reports a null input.
  void* output = root_here ? recvbuf : nullptr;
  const void* input = !in_place(sendbuf) ? sendbuf : output;
  return wait_for(call, decided.route.communicator->reduce(input, output, call.count, call.type, call.op, root,
                                                           *decided.route.options));
}

EARLYBIRD_EXPORT int MPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  CallSpec call = movement_call(Collective::bcast, "MPI_Bcast", comm, count, datatype);
  if (!call.unsupported && !valid_root(comm, root)) call.unsupported = "root is not a rank (MPI reports it)";
  const Decided decided = decide(call);
  if (decided.error != MPI_SUCCESS) return decided.error;
  if (!decided.route.communicator) return PMPI_Bcast(buffer, count, datatype, root, comm);
  return wait_for(call, decided.route.communicator->bcast(buffer, call.count, call.type, root, *decided.route.options));
}

EARLYBIRD_EXPORT int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  if (in_place_receive(recvbuf)) return report_in_place_receive(comm, "MPI_Allgather", MPI_ERR_ARG);
  CallSpec call = movement_call(Collective::allgather, "MPI_Allgather", comm, recvcount, recvtype);
  // Without MPI_IN_PLACE (given on all ranks or none) the send side must be
  // plain bytes of the same length too.
  if (!call.unsupported && !in_place(sendbuf)) {
    const CallSpec send = movement_call(Collective::allgather, "MPI_Allgather", comm, sendcount, sendtype);
    if (send.unsupported) call.unsupported = send.unsupported;
    else if (send.bytes != call.bytes) call.unsupported = "send and receive sizes differ (MPI reports it)";
  }
  const Decided decided = decide(call);
  if (decided.error != MPI_SUCCESS) return decided.error;
  if (!decided.route.communicator)
    return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  auto& communicator = *decided.route.communicator;
  return wait_for(call, in_place(sendbuf)
                            ? communicator.allgather_in_place(recvbuf, call.count, call.type, *decided.route.options)
                            : communicator.allgather(sendbuf, recvbuf, call.count, call.type, *decided.route.options));
}

EARLYBIRD_EXPORT int MPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  if (in_place_receive(recvbuf)) return report_in_place_receive(comm, "MPI_Reduce_scatter_block", MPI_ERR_ARG);
  const CallSpec call =
      reduction_call(Collective::reduce_scatter, "MPI_Reduce_scatter_block", comm, recvcount, datatype, op);
  const Decided decided = decide(call);
  if (decided.error != MPI_SUCCESS) return decided.error;
  if (!decided.route.communicator) return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm);
  auto& communicator = *decided.route.communicator;
  const auto& options = *decided.route.options;
  return wait_for(call, in_place(sendbuf)
                            ? communicator.reduce_scatter_in_place(recvbuf, call.count, call.type, call.op, options)
                            : communicator.reduce_scatter(sendbuf, recvbuf, call.count, call.type, call.op, options));
}
