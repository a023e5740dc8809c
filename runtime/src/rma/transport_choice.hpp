// Which MPI transport a communicator gets (EARLYBIRD_TRANSPORT):
//   rma   MpiTransport; a window that cannot be allocated is an error.
//   p2p   P2pTransport.
//   auto  P2pTransport when the communicator spans several nodes (with Open
//         MPI 4.1 over TCP, osc/ucx passed the self-test below and still took
//         ~64 ms per collective: its flush progresses only the calling
//         thread's UCX worker). Inside one node: MpiTransport when its window
//         can be allocated and a start-up self-test across the communicator
//         passes, else P2pTransport. The
//         self-test runs a few ring rounds (put + notify to the next rank,
//         wait for the previous rank's, fetch-add) and passes when every
//         round carried the right data and the fastest took at most
//         max(kSelfTestFloorUs, kSelfTestFactor x the fastest round of the
//         same ring in two-sided messages), on every rank. The fastest, so
//         that one round stretched by a scheduling blip cannot choose p2p
//         for the whole job. Over TCP with Open MPI 4.1's
//         osc/ucx a round takes tens of milliseconds (docs/design.md).
// The choice and its reason are agreed by every rank (an RMA window that
// works on some ranks only is not used) and printed by rank 0 with
// EARLYBIRD_VERBOSE=1.
#pragma once

#include "../config/environment.hpp"
#include "transport.hpp"

#include <mpi.h>

#include <chrono>
#include <memory>
#include <string>

namespace earlybird {

inline constexpr double kSelfTestFloorUs = 1000;
inline constexpr double kSelfTestFactor = 20;

struct ChosenTransport {
  std::unique_ptr<Transport> transport;
  std::string why;  // one sentence: which transport and why
};

// Collective over `comm`.
ChosenTransport make_mpi_transport(MPI_Comm comm, WindowSize window, const config::CommOptions& options);

}  // namespace earlybird
