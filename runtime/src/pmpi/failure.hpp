// Failure: an earlybird collective that failed, reported as MPI reports
// errors. The error code is of class MPI_ERR_OTHER and MPI_Error_string gives
// earlybird's message (collective, rank, cause). Under MPI_ERRORS_ARE_FATAL
// the message is printed as one line, "earlybird: MPI_Allreduce: <cause>",
// before the handler aborts.
#pragma once

#include <string>

#include <mpi.h>

namespace earlybird::pmpi {

bool errors_are_fatal(MPI_Comm comm);
// Invokes `comm`'s error handler for `call`'s failure; returns the error code
// (if the handler returns).
int report_failure(MPI_Comm comm, const char* call, const std::string& message);
// An erroneous argument MPI names a class for (MPI_ERR_ARG, ...): invokes
// `comm`'s error handler with a code of that class whose string is
// `message`, and returns it.
int report_argument_error(MPI_Comm comm, const char* call, int error_class, const std::string& message);
// The same for a request's failure, seen at completion (MPI_Wait & co.),
// given whether the communicator's handler was fatal when the call started.
int report_request_failure(bool fatal, const char* call, const std::string& message);

}  // namespace earlybird::pmpi
