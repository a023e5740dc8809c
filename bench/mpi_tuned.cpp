#include "mpi_tuned.hpp"

#include <stdexcept>

namespace earlybird::bench {
namespace {

constexpr const char* kDynamicRules = "coll_tuned_use_dynamic_rules";

// The index of control variable `name`, or -1.
int cvar_index(const std::string& name) {
  int index = -1;
  return MPI_T_cvar_get_index(name.c_str(), &index) == MPI_SUCCESS ? index : -1;
}

// Whether a scalar control variable is set (non-zero). Read into a zeroed
// 8-byte word: Open MPI reads a bool variable as one byte.
bool cvar_is_set(int index) {
  MPI_T_cvar_handle handle;
  int count = 0;
  if (MPI_T_cvar_handle_alloc(index, nullptr, &handle, &count) != MPI_SUCCESS) return false;
  long long value = 0;
  const bool ok = MPI_T_cvar_read(handle, &value) == MPI_SUCCESS;
  MPI_T_cvar_handle_free(&handle);
  return ok && value != 0;
}

MPI_T_enum enumeration_of(int index) {
  char name[256], description[1024];
  int name_length = sizeof name, description_length = sizeof description;
  int verbosity = 0, binding = 0, scope = 0;
  MPI_Datatype type;
  MPI_T_enum enumeration = MPI_T_ENUM_NULL;
  MPI_T_cvar_get_info(index, name, &name_length, &verbosity, &type, &enumeration, description, &description_length,
                      &binding, &scope);
  return enumeration;
}

std::vector<TunedAlgorithm> enum_items(MPI_T_enum enumeration) {
  std::vector<TunedAlgorithm> out;
  if (enumeration == MPI_T_ENUM_NULL) return out;
  int items = 0;
  char enum_name[256];
  int enum_name_length = sizeof enum_name;
  MPI_T_enum_get_info(enumeration, &items, enum_name, &enum_name_length);
  for (int i = 0; i < items; ++i) {
    char item[256];
    int item_length = sizeof item;
    TunedAlgorithm a;
    if (MPI_T_enum_get_item(enumeration, i, &a.value, item, &item_length) != MPI_SUCCESS) continue;
    a.name = item;
    if (a.value != 0) out.push_back(a);
  }
  return out;
}

const TunedAlgorithm* find_tuned(const std::vector<TunedAlgorithm>& offered, const std::string& key) {
  for (const auto& a : offered)
    if (key == a.name || key == std::to_string(a.value)) return &a;
  return nullptr;
}

}  // namespace

TunedForcing::TunedForcing(const std::string& variable) {
  int provided = 0;
  if (MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
    reason_ = "MPI_T_init_thread failed";
    return;
  }
  session_ = true;
  const int index = cvar_index(variable);
  if (index < 0) {
    reason_ = "this MPI library has no control variable " + variable + " (not Open MPI's coll_tuned?)";
    return;
  }
  const int dynamic_index = cvar_index(kDynamicRules);
  if (dynamic_index < 0 || !cvar_is_set(dynamic_index)) {
    reason_ = std::string(kDynamicRules) + " is off: run with OMPI_MCA_" + kDynamicRules + "=1";
    return;
  }
  int count = 0;
  if (MPI_T_cvar_handle_alloc(index, nullptr, &handle_, &count) != MPI_SUCCESS) {
    reason_ = "cannot open control variable " + variable;
    return;
  }
  algorithms_ = enum_items(enumeration_of(index));
  if (algorithms_.empty()) reason_ = variable + " lists no algorithms";
}

TunedForcing::~TunedForcing() {
  if (handle_ != MPI_T_CVAR_HANDLE_NULL) MPI_T_cvar_handle_free(&handle_);
  if (session_) MPI_T_finalize();
}

void TunedForcing::write(int value) {
  if (MPI_T_cvar_write(handle_, &value) != MPI_SUCCESS)
    throw std::runtime_error("MPI_T_cvar_write of a coll_tuned algorithm failed");
}

MPI_Comm TunedForcing::forced_comm(const TunedAlgorithm& algorithm, MPI_Comm parent) {
  if (!reason_.empty()) throw std::logic_error("forcing MPI algorithms is unavailable: " + reason_);
  MPI_Comm comm = MPI_COMM_NULL;
  write(algorithm.value);
  const int rc = MPI_Comm_dup(parent, &comm);
  write(0);
  if (rc != MPI_SUCCESS) throw std::runtime_error("MPI_Comm_dup failed");
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  return comm;
}

std::vector<TunedAlgorithm> select_tuned(const std::vector<TunedAlgorithm>& offered,
                                         const std::vector<std::string>& selection) {
  if (selection.size() == 1 && selection.front() == "all") return offered;
  std::vector<TunedAlgorithm> out;
  for (const auto& key : selection) {
    const TunedAlgorithm* a = find_tuned(offered, key);
    if (!a) throw std::invalid_argument("--mpi-algorithms: the MPI library offers no algorithm '" + key + "'");
    out.push_back(*a);
  }
  return out;
}

}  // namespace earlybird::bench
