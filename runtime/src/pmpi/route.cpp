#include "route.hpp"

#include "failure.hpp"

#include "library.hpp"
#include "mpi_types.hpp"

#include <bit>
#include <cstdio>
#include <mutex>
#include <set>
#include <string>
#include <tuple>

namespace earlybird::pmpi {
namespace {

bool is_intercommunicator(MPI_Comm comm) {
  int inter = 0;
  PMPI_Comm_test_inter(comm, &inter);
  return inter != 0;
}

int comm_size(MPI_Comm comm) {
  int size = 0;
  PMPI_Comm_size(comm, &size);
  return size;
}

// Why `call` passes through on a valid intra-communicator; nullptr if it need not.
const char* pass_through_reason(const CallSpec& call) {
  const Library& library = Library::instance();
  if (call.unsupported) return call.unsupported;
  if (call.bytes < library.config().min_bytes) return "below EARLYBIRD_MIN_BYTES";
  return nullptr;
}

// The algorithm an EARLYBIRD_<COLLECTIVE> variable names, else "auto": the
// runtime makes that choice where it knows the communicator's level (node or
// network) and logs it under the same EARLYBIRD_VERBOSE ("earlybird: auto
// for ...", with the runners-up).
std::string algorithm_named(const CollectiveOptions& options) {
  return options.algorithm.empty() ? "auto" : options.algorithm;
}

std::string size_class(std::size_t bytes) {
  if (bytes == 0) return "0 B";
  const int low = std::bit_width(bytes) - 1;
  return "[2^" + std::to_string(low) + ", 2^" + std::to_string(low + 1) + ") B";
}

// One line per (call, communicator size, size class) and decision (calls of
// one class may differ in datatype or operator), from the communicator's rank
// 0. `decision` makes the text, only when EARLYBIRD_VERBOSE asks for it.
template <class Decision>
void log_once(const CallSpec& call, const Decision& decision) {
  if (!Library::instance().config().verbose) return;
  int rank = 0;
  PMPI_Comm_rank(call.comm, &rank);
  if (rank != 0) return;
  const int ranks = comm_size(call.comm);
  const std::string text = decision();
  static std::mutex mutex;
  static std::set<std::tuple<std::string, int, int, std::string>> logged;
  std::lock_guard lock(mutex);
  if (!logged.emplace(call.name, ranks, std::bit_width(call.bytes), text).second) return;
  std::fprintf(stderr, "earlybird: %s P=%d bytes %s: %s\n", call.name, ranks, size_class(call.bytes).c_str(),
               text.c_str());
}

}  // namespace

CallSpec reduction_call(coll::Collective collective, const char* name, MPI_Comm comm, int count,
                        MPI_Datatype type, MPI_Op op) {
  CallSpec call{collective, name, comm};
  const auto earlybird_type = reduction_type(type);
  const auto earlybird_op = predefined_op(op);
  const std::size_t element = earlybird_type ? size_of(*earlybird_type) : type_bytes(type);
  call.bytes = count > 0 ? static_cast<std::size_t>(count) * element : 0;
  if (count < 0) call.unsupported = "negative count (MPI reports it)";
  else if (!earlybird_type) call.unsupported = "datatype is not a predefined integer or floating-point type";
  else if (!earlybird_op) call.unsupported = "operator is not one of MPI_SUM ... MPI_BXOR";
  else if (!op_supports(*earlybird_op, *earlybird_type)) call.unsupported = "operator is not defined for the datatype";
  if (call.unsupported) return call;
  call.count = static_cast<std::size_t>(count);
  call.type = *earlybird_type;
  call.op = *earlybird_op;
  return call;
}

CallSpec movement_call(coll::Collective collective, const char* name, MPI_Comm comm, int count, MPI_Datatype type) {
  CallSpec call{collective, name, comm};
  call.bytes = count > 0 ? static_cast<std::size_t>(count) * type_bytes(type) : 0;
  if (count < 0) call.unsupported = "negative count (MPI reports it)";
  else if (!contiguous_predefined(type)) call.unsupported = "derived or non-contiguous datatype";
  if (call.unsupported) return call;
  call.count = call.bytes;
  call.type = Datatype::uint8;
  return call;
}

Route route(const CallSpec& call, bool blocking) {
  Library& library = Library::instance();
  if (!library.active() || call.comm == MPI_COMM_NULL) return {};
  // A communicator earlybird already runs on is an intra-communicator.
  Communicator* known = library.last_communicator(call.comm);
  if (!known && is_intercommunicator(call.comm)) {
    log_once(call, [] { return std::string("passes through (inter-communicator)"); });
    return {};
  }
  if (const char* reason = pass_through_reason(call)) {
    log_once(call, [reason] { return std::string("passes through (") + reason + ")"; });
    return {};
  }
  const CollectiveOptions& options = library.options(call.collective, blocking);
  log_once(call, [&options] { return "earlybird " + algorithm_named(options); });
  return {known ? known : &library.communicator_for(call.comm), &options};
}

bool in_place_receive(const void* recvbuf) { return recvbuf == MPI_IN_PLACE; }

int report_in_place_receive(MPI_Comm comm, const char* call, int error_class) {
  return report_argument_error(comm, call, error_class, "MPI_IN_PLACE given as the receive buffer");
}

}  // namespace earlybird::pmpi
