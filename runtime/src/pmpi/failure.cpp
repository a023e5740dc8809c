#include "failure.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <utility>
#include <mutex>

namespace earlybird::pmpi {
namespace {

// An error code of `error_class` whose string is `text`; one per distinct
// (class, text), so repeated failures do not exhaust MPI's table of added codes.
int error_code_for(int error_class, const std::string& text) {
  static std::mutex mutex;
  static std::map<std::pair<int, std::string>, int> codes;
  std::lock_guard lock(mutex);
  if (auto it = codes.find({error_class, text}); it != codes.end()) return it->second;
  int code = error_class;
  if (PMPI_Add_error_code(error_class, &code) != MPI_SUCCESS) return error_class;
  const std::string fitted = text.substr(0, MPI_MAX_ERROR_STRING - 1);
  PMPI_Add_error_string(code, fitted.c_str());
  codes.emplace(std::make_pair(error_class, text), code);
  return code;
}

void print_fatal(const char* call, const std::string& message) {
  std::fprintf(stderr, "earlybird: %s: %s\n", call, message.c_str());
  std::fflush(stderr);
}

}  // namespace

bool errors_are_fatal(MPI_Comm comm) {
  MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
  if (PMPI_Comm_get_errhandler(comm, &handler) != MPI_SUCCESS) return true;
  const bool fatal = handler == MPI_ERRORS_ARE_FATAL;
  PMPI_Errhandler_free(&handler);
  return fatal;
}

int report_failure(MPI_Comm comm, const char* call, const std::string& message) {
  const int code = error_code_for(MPI_ERR_OTHER, std::string(call) + ": " + message);
  if (errors_are_fatal(comm)) print_fatal(call, message);
  PMPI_Comm_call_errhandler(comm, code);
  return code;
}

int report_argument_error(MPI_Comm comm, const char* call, int error_class, const std::string& message) {
  const int code = error_code_for(error_class, std::string(call) + ": " + message);
  if (errors_are_fatal(comm)) print_fatal(call, message);
  PMPI_Comm_call_errhandler(comm, code);
  return code;
}

int report_request_failure(bool fatal, const char* call, const std::string& message) {
  const int code = error_code_for(MPI_ERR_OTHER, std::string(call) + ": " + message);
  if (!fatal) return code;
  print_fatal(call, message);
  PMPI_Abort(MPI_COMM_WORLD, code);
  return code;
}

}  // namespace earlybird::pmpi
