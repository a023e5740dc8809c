// Library: the PMPI library's process-wide state from MPI_Init to
// MPI_Finalize. It owns the earlybird Runtime (adopting the MPI the
// interposed MPI_Init started) and the earlybird communicator of every MPI
// communicator a collective went to earlybird on. That state is created on
// the first such collective (collective over the communicator, as the call
// itself is), kept as an MPI attribute, and released by the attribute's
// delete callback: on MPI_Comm_free, or in stop() before PMPI_Finalize.
#pragma once

#include "../config/environment.hpp"

#include <earlybird/collectives/catalogue.hpp>
#include <earlybird/communicator.hpp>
#include <earlybird/runtime.hpp>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include <mpi.h>

namespace earlybird::pmpi {

class Library {
 public:
  static Library& instance();

  // After PMPI_Init_thread gave `provided`; the program asked for `required`.
  // Reads the configuration and starts earlybird unless disabled or the
  // thread level is too low (then a one-line warning: everything passes
  // through). Throws earlybird::Error on a bad configuration.
  void start(int required, int provided);
  // Before PMPI_Finalize: releases every communicator's state, then the runtime.
  void stop();

  // Whether collectives may go to earlybird at all.
  bool active() const { return runtime_ != nullptr; }
  const config::PmpiConfig& config() const { return config_; }
  // The level MPI_Query_thread reports: what the program asked for, or less
  // if MPI gave less.
  int reported_thread_level() const { return reported_level_; }

  // The earlybird communicator over `comm`, created on first use (collective
  // over `comm`). Requires active(); throws earlybird::Error if creation fails.
  Communicator& communicator_for(MPI_Comm comm);
  // The earlybird communicator over `comm` if this thread's last lookup was
  // of `comm` and no communicator state was released since; else nullptr
  // (ask communicator_for). No MPI call: the per-call path of a program
  // calling collectives on one communicator.
  Communicator* last_communicator(MPI_Comm comm) const;

  // The options of an intercepted call of `collective` (EARLYBIRD_<COLLECTIVE>,
  // EARLYBIRD_SEGMENT_BYTES), made once at start(): `blocking` for the calls
  // that wait at once.
  const CollectiveOptions& options(coll::Collective collective, bool blocking) const {
    return options_[blocking ? 1 : 0][static_cast<std::size_t>(collective)];
  }

 private:
  struct CommState;
  struct Entry {
    MPI_Comm comm;
    CommState* state;
  };
  // This thread's last lookup; valid while `released` equals released_.
  struct LastLookup {
    MPI_Comm comm = MPI_COMM_NULL;
    Communicator* communicator = nullptr;
    std::uint64_t released = 0;
  };
  static thread_local LastLookup last_lookup_;
  Communicator& looked_up(MPI_Comm comm);
  static int delete_state(MPI_Comm comm, int keyval, void* value, void* extra);
  void forget(CommState* state);

  config::PmpiConfig config_;
  int reported_level_ = MPI_THREAD_MULTIPLE;  // until start(): no clamp
  std::unique_ptr<Runtime> runtime_;
  int keyval_ = MPI_KEYVAL_INVALID;
  std::mutex mutex_;              // guards entries_ and creation (Runtime::adopt is not thread-safe)
  std::vector<Entry> entries_;    // creation order
  // Counts released communicator states: a handle MPI reuses for a new
  // communicator is never taken for the old one's.
  std::atomic<std::uint64_t> released_{1};
  std::array<std::array<CollectiveOptions, coll::kCollectives.size()>, 2> options_;  // [blocking][collective]
};

}  // namespace earlybird::pmpi
