// Open MPI's coll_tuned algorithms, forced one by one inside one run.
//
// How (Open MPI 4.1.4, verified; docs/benchmarks.md "How to run the sweeps"):
// coll_tuned reads its forced choice (coll_tuned_<collective>_algorithm) when a
// communicator is created, and honours it only when
// coll_tuned_use_dynamic_rules is true. use_dynamic_rules is read-only through
// MPI_T (MPI_T_ERR_CVAR_SET_NEVER), so eb-bench sets
// OMPI_MCA_coll_tuned_use_dynamic_rules=1 in its environment before MPI_Init;
// with no rules file and algorithm 0 ("ignore"), the dynamic decision falls
// back to the fixed one, so MPI's default is unchanged. The algorithm
// variables are writable through MPI_T: write N, MPI_Comm_dup, write 0 back;
// the duplicate keeps algorithm N for its life. Names come from the variable's
// MPI_T enumeration, so they match `ompi_info --param coll tuned --level 9`.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

namespace earlybird::bench {

struct TunedAlgorithm {
  int value = 0;     // coll_tuned_<collective>_algorithm = value
  std::string name;  // "ring", "basic_linear", ...
};

// An MPI_T session over one coll_tuned_<collective>_algorithm variable. Must
// be destroyed before MPI_Finalize (Open MPI 4.1.4 crashes in MPI_T_finalize
// called after MPI_Finalize).
class TunedForcing {
 public:
  explicit TunedForcing(const std::string& variable);
  ~TunedForcing();
  TunedForcing(const TunedForcing&) = delete;
  TunedForcing& operator=(const TunedForcing&) = delete;

  // Empty when forcing works; otherwise why not (no such variable, dynamic
  // rules off, ...).
  const std::string& unavailable_reason() const { return reason_; }
  // Every algorithm the variable offers, without 0 ("ignore").
  const std::vector<TunedAlgorithm>& algorithms() const { return algorithms_; }
  // A duplicate of `parent` on which the MPI library runs `algorithm`. The
  // caller frees it with MPI_Comm_free. Errors on it are returned, not fatal.
  MPI_Comm forced_comm(const TunedAlgorithm& algorithm, MPI_Comm parent);

 private:
  void write(int value);
  std::string reason_;
  std::vector<TunedAlgorithm> algorithms_;
  MPI_T_cvar_handle handle_ = MPI_T_CVAR_HANDLE_NULL;
  bool session_ = false;
};

// The subset of `offered` named by `selection` ("all", or values and names
// separated by commas); throws std::invalid_argument on an unknown item.
std::vector<TunedAlgorithm> select_tuned(const std::vector<TunedAlgorithm>& offered,
                                         const std::vector<std::string>& selection);

}  // namespace earlybird::bench
