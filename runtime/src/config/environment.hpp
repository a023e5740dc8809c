// Environment: every EARLYBIRD_* variable the runtime and the PMPI library
// read, parsed in one place (README, "Environment" and "PMPI library"), and
// the one MPI setting the runtime makes before MPI_Init. A malformed value is
// an earlybird::Error naming the variable and what it accepts.
#pragma once

#include <earlybird/collectives/catalogue.hpp>

#include <array>
#include <chrono>
#include <cstddef>
#include <string>

namespace earlybird::config {

// EARLYBIRD_TRANSPORT: which transport a communicator's window uses.
enum class TransportPreference { automatic, rma, p2p };

// What every communicator is created with.
struct CommOptions {
  std::size_t scratch_bytes = 8u << 20;  // per lane: EARLYBIRD_SCRATCH_BYTES
  std::size_t flags_per_lane = 1u << 16;
  std::chrono::milliseconds timeout{120000};     // EARLYBIRD_TIMEOUT_MS
  std::chrono::milliseconds straggler_after{0};  // EARLYBIRD_STRAGGLER_MS; 0: off
  bool verbose = false;                          // EARLYBIRD_VERBOSE=1
  // Caller-run: how long a small collective's calling thread drives it
  // before the progress thread takes over (EARLYBIRD_CALLER_RUN_US; 0: every
  // collective goes through the progress thread).
  std::chrono::microseconds caller_run{20};
  TransportPreference transport = TransportPreference::automatic;  // EARLYBIRD_TRANSPORT
  // RMA on one node through a shared window, by loads and stores, and the
  // hybrid transport's node segment across nodes (EARLYBIRD_SHARED_WINDOW=0:
  // MPI calls on one node, messages between all ranks across nodes, for
  // comparison).
  bool shared_window = true;
  // EARLYBIRD_TUNE: the first `auto` call of each size class tunes the
  // class first (Communicator::tune, docs/design.md, "Tuning"): off (unset,
  // 0 or off), the model's N fastest (N), or every entry it ranks (all,
  // tune_candidates 0). EARLYBIRD_TUNE_BUDGET_MS: TuneOptions::budget.
  bool tune = false;
  std::size_t tune_candidates = 4;
  std::chrono::milliseconds tune_budget{100};
};
CommOptions comm_options_from_environment();

// Whether to bind the progress thread: EARLYBIRD_BIND=1 yes, =0 no, unset:
// `requested` (RuntimeOptions::bind_progress_thread).
bool binding_requested(bool requested);
// EARLYBIRD_PROBE=0 turns the start-up probe off (earlybird/machine_probe.hpp).
bool probe_allowed_by_environment();
// EARLYBIRD_SHARED_ARENA_GIB: the address space earlybird::allocate_shared
// reserves (rma/shared_arena.hpp), in bytes; default 64 GiB, 0: no arena.
std::size_t shared_arena_bytes_from_environment();

// Fault injection, for tests: EARLYBIRD_INJECT_STALL_US=N makes every
// progress thread sleep N µs once per ProgressEngine::kTurnsPerStall loop
// turns (a descheduled or overloaded progress thread); 0 (default): never.
std::chrono::microseconds injected_stall_from_environment();

// Settings for the MPI library, made before MPI_Init; a value the user set
// is kept (docs/design.md, "RMA transport"):
//   - OMPI_MCA_osc_rdma_priority=1: Open MPI picks osc/rdma for single-node
//     windows by default; osc/sm is an order of magnitude faster there;
//   - UCX_USE_MT_MUTEX=y: under MPI_THREAD_MULTIPLE, UCX guards its worker
//     with a spinlock; the progress thread and a user thread both enter it,
//     and where they share a CPU the one spinning waits out the holder's
//     whole scheduler slice (4 ms stalls measured across the emulated hosts).
//     A mutex puts the waiter to sleep instead.
void prepare_mpi_environment();

// --- the PMPI library (libearlybird_mpi.so), read at MPI_Init.

// Calls whose message is smaller than this pass through. In a loop of calls
// through the library (bench/pmpi_loop.c, P = 2 and 4 on the project's VM)
// earlybird takes 0.14-0.74 of Open MPI's time from 4 KiB for every
// collective; below, reduce and bcast of 8 B take 1.3-1.7x and allgather
// of 1-2 KiB 1.1-1.2x (docs/benchmarks.md, "The PMPI library's per-call
// path").
constexpr std::size_t kDefaultMinBytes = 4 * 1024;

struct PmpiConfig {
  bool disabled = false;                    // EARLYBIRD_DISABLE
  bool verbose = false;                     // EARLYBIRD_VERBOSE
  std::size_t min_bytes = kDefaultMinBytes;  // EARLYBIRD_MIN_BYTES
  std::size_t segment_bytes = 0;            // EARLYBIRD_SEGMENT_BYTES; 0: each algorithm's default
  std::size_t scratch_bytes = CommOptions{}.scratch_bytes;  // EARLYBIRD_SCRATCH_BYTES
  // EARLYBIRD_SHARED_BUFFERS=1: MPI_Alloc_mem hands out earlybird::
  // allocate_shared's memory, and every intercepted call is made with
  // CollectiveOptions::shared_buffers (a promise, like naming an algorithm,
  // that the program's collective buffers come from MPI_Alloc_mem).
  bool shared_buffers = false;
  // Per coll::Collective (EARLYBIRD_ALLREDUCE, ...); empty: "auto".
  std::array<std::string, 5> algorithm;

  const std::string& algorithm_for(coll::Collective collective) const {
    return algorithm[static_cast<std::size_t>(collective)];
  }
};

// EARLYBIRD_DISABLE is set (to anything but 0); read before MPI_Init, which
// then asks MPI for exactly the program's thread level.
bool pmpi_disabled_by_environment();
// Throws when a variable is malformed or names no algorithm.
PmpiConfig pmpi_config_from_environment();
// "EARLYBIRD_ALLREDUCE", ... : the variable that picks `collective`'s algorithm.
const char* algorithm_variable(coll::Collective collective);

}  // namespace earlybird::config
