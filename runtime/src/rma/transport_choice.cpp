#include "transport_choice.hpp"

#include "hybrid_transport.hpp"
#include "mpi_transport.hpp"
#include "p2p_transport.hpp"
#include "window_layout.hpp"

#include <earlybird/error.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <limits>
#include <thread>

namespace earlybird {
namespace {

constexpr int kSelfTestRounds = 8;
constexpr std::size_t kSelfTestDataOffset = 32;  // a free header word (window_layout.hpp)
constexpr std::chrono::seconds kSelfTestGiveUp{2};
constexpr int kSelfTestTag = 7311;

// Ring rounds over the transport's own window: put a word and raise a flag at
// the next rank, wait for the previous rank's. Returns the fastest round in
// microseconds, or -1 when a round did not complete or carried wrong data.
// The fastest: one round stretched by a scheduling blip (a busy node, a
// profiler starting) must not condemn the window for the whole job, while
// one-sided progress that is slow by design is slow in every round.
double ring_self_test(Transport& t) {
  const int next = (t.rank() + 1) % t.size();
  const int previous = (t.rank() + t.size() - 1) % t.size();
  double fastest_us = std::numeric_limits<double>::max();
  for (std::uint64_t round = 1; round <= kSelfTestRounds; ++round) {
    const auto start = std::chrono::steady_clock::now();
    const std::uint64_t data = (static_cast<std::uint64_t>(t.rank()) << 32) | round;
    t.put(next, kSelfTestDataOffset, &data, sizeof data);
    t.notify(next, WindowLayout::kWarmUpWordOffset, round);
    while (t.load_flag(WindowLayout::kWarmUpWordOffset) < round) {
      t.poll_hook();
      if (std::chrono::steady_clock::now() - start > kSelfTestGiveUp) return -1;
      std::this_thread::yield();
    }
    std::uint64_t seen = 0;
    std::memcpy(&seen, t.window() + kSelfTestDataOffset, sizeof seen);
    // The previous rank may already be a round ahead: its data, this round or later.
    if ((seen >> 32) != static_cast<std::uint64_t>(previous) || (seen & 0xffffffffu) < round) return -1;
    if (t.fetch_add(next, WindowLayout::kTicketCounterOffset, 1) != round - 1) return -1;
    const std::chrono::duration<double, std::micro> took = std::chrono::steady_clock::now() - start;
    fastest_us = std::min(fastest_us, took.count());
  }
  return fastest_us;
}

// The same ring with two-sided messages: the fastest round in microseconds,
// the yardstick for the RMA rounds (both slow down alike on a busy node).
double ring_reference(MPI_Comm comm, int rank, int size) {
  const int next = (rank + 1) % size;
  const int previous = (rank + size - 1) % size;
  double fastest_us = std::numeric_limits<double>::max();
  for (int round = 1; round <= kSelfTestRounds; ++round) {
    const auto start = std::chrono::steady_clock::now();
    std::uint64_t out = static_cast<std::uint64_t>(round), in = 0;
    check_mpi(PMPI_Sendrecv(&out, 1, MPI_UINT64_T, next, kSelfTestTag, &in, 1, MPI_UINT64_T, previous, kSelfTestTag,
                            comm, MPI_STATUS_IGNORE),
              "MPI_Sendrecv (transport self-test)");
    const std::chrono::duration<double, std::micro> took = std::chrono::steady_clock::now() - start;
    fastest_us = std::min(fastest_us, took.count());
  }
  return fastest_us;
}

struct SelfTest {
  double rma_us = 0;        // the slowest rank's fastest RMA round; -1: failed somewhere
  double reference_us = 0;  // the slowest rank's fastest two-sided round
  bool passed() const {
    return rma_us >= 0 && rma_us <= std::max(kSelfTestFloorUs, kSelfTestFactor * reference_us);
  }
};

// Runs the self-test on every rank and agrees on its outcome. Leaves the
// window's header zeroed.
SelfTest agreed_self_test(Transport& t, MPI_Comm comm) {
  double result[3] = {0, 0, 0};  // {fastest RMA round, failed, fastest reference round}: max over ranks
  if (t.size() > 1) {
    const double mine = ring_self_test(t);
    result[0] = mine;
    result[1] = mine < 0 ? 1 : 0;
    result[2] = ring_reference(comm, t.rank(), t.size());
  }
  // Every rank's puts to this window are complete once all passed this point.
  check_mpi(PMPI_Allreduce(MPI_IN_PLACE, result, 3, MPI_DOUBLE, MPI_MAX, comm), "MPI_Allreduce (transport self-test)");
  std::memset(t.window(), 0, WindowLayout::kHeaderBytes);
  check_mpi(PMPI_Barrier(comm), "MPI_Barrier (transport self-test)");
  return SelfTest{result[1] > 0 ? -1 : result[0], result[2]};
}

std::string rounded_us(double us) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", us);
  return text;
}

// A communicator spanning nodes: the hybrid transport when some node holds
// two ranks or more (their messages become loads and stores), else, or when
// a node's shared segment cannot be made, the point-to-point transport.
ChosenTransport spanning(MPI_Comm comm, int nodes, WindowSize window, const config::CommOptions& options) {
  int size = 0;
  MPI_Comm_size(comm, &size);
  const std::string span = "the communicator spans " + std::to_string(nodes) + " nodes";
  const std::string rma_note = " (RMA across nodes only with EARLYBIRD_TRANSPORT=rma, docs/design.md)";
  if (nodes == size || !options.shared_window)
    return {std::make_unique<P2pTransport>(comm, window, options.timeout),
            "p2p: " + span + (nodes == size ? ", one rank each" : ", EARLYBIRD_SHARED_WINDOW=0") + rma_note};
  std::string failure;
  try {
    return {std::make_unique<HybridTransport>(comm, window, options),
            "hybrid: " + span + "; shared memory inside a node, messages between nodes"};
  } catch (const Error& e) {
    failure = e.what();
  }
  return {std::make_unique<P2pTransport>(comm, window, options.timeout), "p2p: " + span + "; " + failure};
}

ChosenTransport automatic(MPI_Comm comm, WindowSize window, const config::CommOptions& options) {
  if (const int nodes = node_layout(comm).nodes; nodes > 1) return spanning(comm, nodes, window, options);
  std::unique_ptr<Transport> rma;
  std::string rma_failure;
  try {
    rma = std::make_unique<MpiTransport>(comm, window, options.shared_window);
  } catch (const Error& e) {
    rma_failure = e.what();
  }
  // Every rank must agree: a window that failed anywhere is not used.
  int failed = rma ? 0 : 1;
  check_mpi(PMPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, comm), "MPI_Allreduce (transport choice)");
  std::string why;
  if (failed) {
    why = rma_failure.empty() ? "the RMA window failed on another rank" : rma_failure;
  } else {
    const SelfTest test = agreed_self_test(*rma, comm);
    const std::string figures = "fastest RMA round " + rounded_us(test.rma_us) + " us, two-sided " +
                                rounded_us(test.reference_us) + " us";
    const char* kind = rma->direct_window(0) ? "shared window, loads and stores" : "MPI one-sided calls";
    if (test.passed()) return {std::move(rma), std::string("rma (") + kind + "): the window works (" + figures + ")"};
    why = test.rma_us < 0 ? "the RMA self-test did not complete or read wrong data"
                          : "one-sided progress is slow here (" + figures + ")";
    rma->close();
  }
  return {std::make_unique<P2pTransport>(comm, window, options.timeout), "p2p: " + why};
}

}  // namespace

ChosenTransport make_mpi_transport(MPI_Comm comm, WindowSize window, const config::CommOptions& options) {
  ChosenTransport chosen;
  switch (options.transport) {
    case config::TransportPreference::rma:
      chosen = {std::make_unique<MpiTransport>(comm, window, options.shared_window), "rma: EARLYBIRD_TRANSPORT=rma"};
      break;
    case config::TransportPreference::p2p:
      chosen = {std::make_unique<P2pTransport>(comm, window, options.timeout), "p2p: EARLYBIRD_TRANSPORT=p2p"};
      break;
    case config::TransportPreference::automatic:
      chosen = automatic(comm, window, options);
      break;
  }
  if (options.verbose && chosen.transport->rank() == 0)
    std::fprintf(stderr, "earlybird: communicator of %d ranks: transport %s\n", chosen.transport->size(),
                 chosen.why.c_str());
  return chosen;
}

}  // namespace earlybird
