// What the two MPI transports (RMA and point-to-point) share: error checks,
// their own duplicate of the user's communicator, the window-size agreement,
// the clock agreement with rank 0 and splitting.
#pragma once

#include <mpi.h>

#include "transport.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>

namespace earlybird {

// Throws earlybird::Error naming `what` and MPI's error string unless rc is MPI_SUCCESS.
void check_mpi(int rc, const char* what);

// Clock agreement with rank 0 (Cristian's method): rank 0 exchanges
// kClockRounds ping-pongs with each rank; the round with the shortest round
// trip gives offset = t_rank - (t0_send + t0_receive) / 2, with an error of at
// most half that round trip (docs/design.md quotes the measured bounds).
struct ClockSync {
  std::int64_t offset_ns = 0;  // this rank's steady clock minus rank 0's
  std::int64_t origin_ns = 0;  // rank 0's steady clock at the agreement
};
ClockSync agree_on_clock(MPI_Comm comm);

// Where a communicator's ranks run. Collective over `comm`; every rank gets
// the same answer.
struct NodeLayout {
  int nodes = 1;          // MPI_COMM_TYPE_SHARED groups spanned
  // Ranks per node when the ranks span several nodes and each node holds
  // that many consecutive ranks (node k: ranks k n ... k n + n - 1); 0
  // otherwise (one node, or nodes of different sizes or interleaved ranks).
  int uniform_ranks = 0;
};
NodeLayout node_layout(MPI_Comm comm);

// A transport's own communicator: a duplicate of `comm` that returns errors
// instead of aborting. Collective. Also checks that every rank asked for the
// same window size (throws earlybird::Error otherwise).
MPI_Comm duplicate_for_transport(MPI_Comm comm, std::size_t window_bytes);

// MPI_Comm_split of `comm`; MPI_COMM_NULL for ranks that passed MPI_UNDEFINED.
MPI_Comm split_comm(MPI_Comm comm, int color, int key);

// A transport of type T over the ranks of `comm` passing the same color
// (nullptr for MPI_UNDEFINED). T's constructor duplicates the part it is given.
template <class T, class... Args>
std::unique_ptr<T> split_transport(MPI_Comm comm, int color, int key, WindowSize window, Args... args) {
  MPI_Comm part = split_comm(comm, color, key);
  if (part == MPI_COMM_NULL) return nullptr;
  struct FreeOnExit {
    MPI_Comm comm;
    ~FreeOnExit() { MPI_Comm_free(&comm); }
  } free_part{part};
  return std::make_unique<T>(part, window, args...);
}

}  // namespace earlybird
