// eb-bench pap, contenders and one call: the allreduces under test (the
// shared contenders of contenders.hpp, ring first) and one timed call after
// the emulated compute phase, with the outcome every rank agrees on.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "contenders.hpp"
#include "pap_config.hpp"

namespace earlybird::bench::pap {

// A duplicate of MPI_COMM_WORLD whose errors are returned, freed at the end.
struct OwnedComm {
  MPI_Comm comm = MPI_COMM_NULL;
  OwnedComm();
  ~OwnedComm();
  OwnedComm(const OwnedComm&) = delete;
  OwnedComm& operator=(const OwnedComm&) = delete;
};

// One contender per configured algorithm, in order ("mpi": MPI_Allreduce on
// `mpi_comm`; the others earlybird's, with call_timeout's watchdog).
std::vector<Contender> make_contenders(Communicator& comm, const PapConfig& config, MPI_Comm mpi_comm);

// What every rank agrees on after one call.
struct CallOutcome {
  double mean_elapsed_s = 0;  // ē of this call
  bool wrong = false;         // some rank's result differed from the oracle
  std::string error;          // non-empty: the call failed on some rank
};

// Runs the call into data.output; returns the error text ("" on success).
std::string call_catching(const Contender& contender, Buffers& data);

// Averages elapsed times, and ORs wrong and failed flags, over ranks.
CallOutcome agree(double elapsed_s, bool wrong, std::string error);

void two_barriers();

// One iteration of the procedure for one contender: output set to -1,
// barriers, compute phase of 2 half_ms, the timed call, the check.
CallOutcome delayed_call(Communicator& comm, const Contender& contender, Buffers& data, double half_ms);

// An untimed, balanced call of every contender: warms it up and finds the ones
// the runtime rejects ("unknown algorithm" until they exist). Agreed on all
// ranks; one error text per contender, "" where it worked.
std::vector<std::string> warm_up(const std::vector<Contender>& contenders, Buffers& data);

}  // namespace earlybird::bench::pap
