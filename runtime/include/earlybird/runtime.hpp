// Runtime: earlybird's process-wide state over MPI. It initialises MPI with
// MPI_THREAD_MULTIPLE (or adopts an MPI the caller initialised, if its thread
// level is MPI_THREAD_MULTIPLE), starts the progress thread and hands out
// communicators. Create one per process, after nothing else, and destroy it
// after every Communicator it gave out.
#pragma once

#include <earlybird/collectives/predict.hpp>
#include <earlybird/communicator.hpp>

#include <chrono>
#include <memory>

#include <mpi.h>

namespace earlybird {

struct RuntimeOptions {
  int worker_threads = 0;           // TBB workers for reductions; 0: cores / machine_ranks(), at most the CPUs allowed
  // Bind the progress thread to one CPU of the rank's share of the node when
  // its mask is wider (mpirun binding to a socket or not at all). Off: on a
  // 16-core node that pinning cost millisecond stalls (docs/design.md, "Threads").
  bool bind_progress_thread = false;
  std::size_t scratch_bytes = 0;    // window scratch per lane; 0: EARLYBIRD_SCRATCH_BYTES or 8 MiB
  std::chrono::milliseconds timeout{0};  // watchdog; 0: EARLYBIRD_TIMEOUT_MS or 120 s
};

// Ranks of `comm` whose kernel boot id is this process's: the ranks sharing
// this machine's CPUs, also where MPI sees separate nodes (containers or
// emulated hosts with their own IPC namespaces on one machine). `fallback`
// where some rank cannot read its boot id. Collective over `comm`; calls
// PMPI only.
int ranks_on_this_machine(MPI_Comm comm, int fallback);

class Runtime {
 public:
  // Initialises MPI if nobody has; otherwise adopts it. Throws earlybird::Error
  // when the MPI library cannot give MPI_THREAD_MULTIPLE.
  Runtime(int* argc, char*** argv, RuntimeOptions options = {});
  explicit Runtime(RuntimeOptions options = {});
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // A communicator over MPI_COMM_WORLD.
  Communicator world();
  // A communicator over the ranks of `comm` (duplicated; collective over comm).
  Communicator adopt(MPI_Comm comm);
  // Ranks sharing this node, and the reduction threads each rank gets.
  int local_ranks() const;
  int worker_threads() const;
  // Ranks sharing this machine's CPUs: ranks_on_this_machine over the world,
  // at least local_ranks(). Sizes the thread budget and decides whether
  // pollers may spin (docs/design.md, "Threads").
  int machine_ranks() const;
  // The cost model's parameters `auto` chooses with, the same for every
  // Runtime of the process: EARLYBIRD_PROFILE's file, else the start-up
  // probe's (earlybird/machine_probe.hpp; EARLYBIRD_PROBE=0: off), else the
  // defaults; `source` says which.
  const coll::MachineProfile& cost_profile() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace earlybird
