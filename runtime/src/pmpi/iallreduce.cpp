// MPI_Iallreduce on earlybird: the earlybird Future is wrapped in an MPI
// generalized request (MPI_Grequest_start), completed with
// MPI_Grequest_complete when the Future completes, so every completion call
// (MPI_Wait, MPI_Test, MPI_Waitall, MPI_Testany, ...) works on it. A failure
// is reported when the request is completed by the program: its status and
// return code carry the error, or, if the communicator's handler was
// MPI_ERRORS_ARE_FATAL when the call started, the process aborts with the message.
#include "failure.hpp"
#include "route.hpp"

#include <earlybird/future.hpp>

#include <exception>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <mpi.h>

#define EARLYBIRD_EXPORT extern "C" __attribute__((visibility("default")))

namespace earlybird::pmpi {
namespace {

// The generalized request's extra state; MPI frees it through free_request.
struct PendingCall {
  bool fatal = true;
  std::string error;  // written before MPI_Grequest_complete, read after
  MPI_Request handle = MPI_REQUEST_NULL;
};

// Earlybird's outstanding requests, each with a future that is ready once
// MPI_Grequest_complete has returned for it, until MPI frees them.
using Completed = std::shared_future<void>;

class Outstanding {
 public:
  void add(MPI_Request handle, const Completed& future) {
    std::lock_guard lock(mutex_);
    futures_.insert_or_assign(handle, future);
  }
  void remove(MPI_Request handle) {
    std::lock_guard lock(mutex_);
    futures_.erase(handle);
  }
  std::optional<Completed> find(MPI_Request handle) {
    std::lock_guard lock(mutex_);
    auto it = futures_.find(handle);
    if (it == futures_.end()) return std::nullopt;
    return it->second;
  }

 private:
  std::mutex mutex_;
  std::map<MPI_Request, Completed> futures_;
};

Outstanding& outstanding() {
  static Outstanding requests;
  return requests;
}

// Sleeps until `request`, if it is one of ours, is complete in MPI's eyes;
// its error, if any, is reported by the MPI completion call after.
void sleep_until_done(MPI_Request request) {
  if (request == MPI_REQUEST_NULL) return;
  if (const std::optional<Completed> completed = outstanding().find(request)) completed->wait();
}

int query_request(void* extra, MPI_Status* status) {
  auto* pending = static_cast<PendingCall*>(extra);
  PMPI_Status_set_elements(status, MPI_BYTE, 0);
  PMPI_Status_set_cancelled(status, 0);
  status->MPI_SOURCE = MPI_UNDEFINED;
  status->MPI_TAG = MPI_UNDEFINED;
  status->MPI_ERROR = pending->error.empty()
                          ? MPI_SUCCESS
                          : report_request_failure(pending->fatal, "MPI_Iallreduce", pending->error);
  return status->MPI_ERROR;
}

int free_request(void* extra) {
  auto* pending = static_cast<PendingCall*>(extra);
  outstanding().remove(pending->handle);
  delete pending;
  return MPI_SUCCESS;
}

// Collective requests cannot be cancelled (MPI standard); nothing to do.
int cancel_request(void*, int) { return MPI_SUCCESS; }

// A request that completes when `future` does.
int request_for(const Future& future, MPI_Comm comm, MPI_Request* request) {
  auto* pending = new PendingCall{errors_are_fatal(comm), {}};
  const int rc = PMPI_Grequest_start(&query_request, &free_request, &cancel_request, pending, request);
  if (rc != MPI_SUCCESS) {
    delete pending;
    return rc;
  }
  const MPI_Request handle = *request;
  pending->handle = handle;
  auto granted = std::make_shared<std::promise<void>>();
  outstanding().add(handle, granted->get_future().share());
  future.on_complete([pending, handle, granted](std::exception_ptr error) {
    if (error) {
      try {
        std::rethrow_exception(error);
      } catch (const std::exception& e) {
        pending->error = e.what();
      }
    }
    PMPI_Grequest_complete(handle);
    granted->set_value();
  });
  return MPI_SUCCESS;
}

}  // namespace
}  // namespace earlybird::pmpi

using namespace earlybird::pmpi;  // NOLINT: the MPI_ entry point below is C

EARLYBIRD_EXPORT int MPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                                    MPI_Comm comm, MPI_Request* request) {
  if (in_place_receive(recvbuf)) return report_in_place_receive(comm, "MPI_Iallreduce", MPI_ERR_BUFFER);
  const CallSpec call =
      reduction_call(earlybird::coll::Collective::allreduce, "MPI_Iallreduce", comm, count, datatype, op);
  try {
    const Route chosen = route(call, false);
    if (!chosen.communicator) return PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, comm, request);
    const void* input = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    return request_for(chosen.communicator->allreduce(input, recvbuf, call.count, call.type, call.op, *chosen.options),
                       comm, request);
  } catch (const std::exception& e) {
    return report_failure(comm, call.name, e.what());
  }
}

EARLYBIRD_EXPORT int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  if (request) sleep_until_done(*request);
  return PMPI_Wait(request, status);
}

EARLYBIRD_EXPORT int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  for (int i = 0; requests && i < count; ++i) sleep_until_done(requests[i]);
  return PMPI_Waitall(count, requests, statuses);
}
