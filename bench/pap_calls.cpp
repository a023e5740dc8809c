// eb-bench pap, contenders and one call (pap_calls.hpp).
#include "pap_calls.hpp"

#include <chrono>
#include <thread>
#include <utility>

namespace earlybird::bench::pap {
namespace {

const CollectiveSpec& allreduce_spec() { return collective_spec("allreduce"); }

// The emulated compute phase, monitored as an application would be.
void compute_phase(Communicator& comm, double half_ms) {
  const std::chrono::duration<double, std::milli> half(half_ms);
  comm.phase_begin();
  std::this_thread::sleep_for(half);
  comm.edge(0.5);
  std::this_thread::sleep_for(half);
  comm.phase_end();
}

// The output before a call: -1 everywhere (no sum of inputs 0..15 is negative).
void poison_output(Buffers& data) { reset_output(allreduce_spec(), data); }

bool wrong_result(const Buffers& data) { return !output_matches(allreduce_spec(), data); }

}  // namespace

OwnedComm::OwnedComm() {
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
}

OwnedComm::~OwnedComm() { MPI_Comm_free(&comm); }

std::vector<Contender> make_contenders(Communicator& comm, const PapConfig& config, MPI_Comm mpi_comm) {
  CollectiveOptions options;
  options.timeout = call_timeout(config.delays_ms);
  std::vector<Contender> out;
  for (const auto& name : config.algorithms)
    out.push_back(name == kMpi ? mpi_contender(allreduce_spec(), kMpi, mpi_comm)
                               : earlybird_contender(allreduce_spec(), name, comm, options));
  return out;
}

std::string call_catching(const Contender& contender, Buffers& data) {
  try {
    contender.call(data);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

CallOutcome agree(double elapsed_s, bool wrong, std::string error) {
  double local[3] = {elapsed_s, wrong ? 1.0 : 0.0, error.empty() ? 0.0 : 1.0}, sum[3];
  MPI_Allreduce(local, sum, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (sum[2] > 0 && error.empty()) error = "failed on another rank";
  return {sum[0] / ranks, sum[1] > 0, std::move(error)};
}

void two_barriers() {
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
}

CallOutcome delayed_call(Communicator& comm, const Contender& contender, Buffers& data, double half_ms) {
  poison_output(data);
  two_barriers();
  compute_phase(comm, half_ms);
  const double t0 = MPI_Wtime();
  const std::string error = call_catching(contender, data);
  const double t1 = MPI_Wtime();
  const bool wrong = error.empty() && wrong_result(data);
  return agree(t1 - t0, wrong, error);
}

std::vector<std::string> warm_up(const std::vector<Contender>& contenders, Buffers& data) {
  std::vector<std::string> errors;
  for (const auto& contender : contenders) {
    poison_output(data);
    two_barriers();
    const std::string error = call_catching(contender, data);
    CallOutcome o = agree(0, error.empty() && wrong_result(data), error);
    if (o.error.empty() && o.wrong) o.error = "wrong result in the warm-up call";
    errors.push_back(o.error);
  }
  return errors;
}

}  // namespace earlybird::bench::pap
