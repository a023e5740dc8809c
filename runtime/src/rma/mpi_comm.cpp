#include "mpi_comm.hpp"

#include <earlybird/error.hpp>

#include <chrono>
#include <string>
#include <vector>

namespace earlybird {

void check_mpi(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  throw Error(std::string(what) + " failed: " + std::string(text, static_cast<std::size_t>(length)));
}

namespace {

constexpr int kClockRounds = 8;
constexpr int kClockTag = 7301;

std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Rank 0's side with one peer: the offset of the round with the least round trip.
ClockSync measure_peer(MPI_Comm comm, int peer) {
  ClockSync best;
  std::int64_t best_rtt = -1;
  for (int round = 0; round < kClockRounds; ++round) {
    std::int64_t remote = 0;
    const std::int64_t sent = steady_ns();
    check_mpi(MPI_Send(&sent, 1, MPI_INT64_T, peer, kClockTag, comm), "MPI_Send (clock agreement)");
    check_mpi(MPI_Recv(&remote, 1, MPI_INT64_T, peer, kClockTag, comm, MPI_STATUS_IGNORE), "MPI_Recv (clock agreement)");
    const std::int64_t received = steady_ns();
    const std::int64_t rtt = received - sent;
    if (best_rtt < 0 || rtt < best_rtt) {
      best_rtt = rtt;
      best.offset_ns = remote - (sent + received) / 2;
    }
  }
  return best;
}

void answer_rank0(MPI_Comm comm) {
  for (int round = 0; round < kClockRounds; ++round) {
    std::int64_t ping = 0;
    check_mpi(MPI_Recv(&ping, 1, MPI_INT64_T, 0, kClockTag, comm, MPI_STATUS_IGNORE), "MPI_Recv (clock agreement)");
    const std::int64_t now = steady_ns();
    check_mpi(MPI_Send(&now, 1, MPI_INT64_T, 0, kClockTag, comm), "MPI_Send (clock agreement)");
  }
}

}  // namespace

ClockSync agree_on_clock(MPI_Comm comm) {
  int rank = 0, size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  // Per rank: its offset, rank 0's clock origin.
  std::vector<std::int64_t> table(rank == 0 ? 2 * static_cast<std::size_t>(size) : 0);
  if (rank == 0) {
    const std::int64_t origin = steady_ns();
    for (int peer = 1; peer < size; ++peer) {
      table[2 * static_cast<std::size_t>(peer)] = measure_peer(comm, peer).offset_ns;
    }
    for (int peer = 0; peer < size; ++peer) table[2 * static_cast<std::size_t>(peer) + 1] = origin;
  } else {
    answer_rank0(comm);
  }
  std::int64_t mine[2] = {0, 0};
  check_mpi(MPI_Scatter(table.data(), 2, MPI_INT64_T, mine, 2, MPI_INT64_T, 0, comm), "MPI_Scatter (clock agreement)");
  return ClockSync{mine[0], mine[1]};
}

NodeLayout node_layout(MPI_Comm comm) {
  int rank = 0, size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  MPI_Comm node = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node), "MPI_Comm_split_type");
  int node_rank = 0, node_size = 0;
  MPI_Comm_rank(node, &node_rank);
  MPI_Comm_size(node, &node_size);
  MPI_Comm_free(&node);
  // node_rank counts this node's ranks in comm's order, so the node is the
  // block [k n, k n + n) exactly when every rank's node_rank is rank mod n.
  const int in_block = node_rank == rank % node_size ? 0 : 1;
  int agreed[3] = {node_size, -node_size, in_block};  // max size, -min size, any rank off its block
  check_mpi(PMPI_Allreduce(MPI_IN_PLACE, agreed, 3, MPI_INT, MPI_MAX, comm), "MPI_Allreduce (node layout)");
  int leaders = node_rank == 0 ? 1 : 0;
  check_mpi(PMPI_Allreduce(MPI_IN_PLACE, &leaders, 1, MPI_INT, MPI_SUM, comm), "MPI_Allreduce (node count)");
  const bool uniform = agreed[0] == -agreed[1] && agreed[2] == 0;
  return NodeLayout{leaders, leaders > 1 && uniform ? agreed[0] : 0};
}

MPI_Comm duplicate_for_transport(MPI_Comm comm, std::size_t window_bytes) {
  MPI_Comm own = MPI_COMM_NULL;
  check_mpi(MPI_Comm_dup(comm, &own), "MPI_Comm_dup");
  MPI_Comm_set_errhandler(own, MPI_ERRORS_RETURN);
  unsigned long sizes[2] = {window_bytes, ~static_cast<unsigned long>(window_bytes)};
  const int rc = PMPI_Allreduce(MPI_IN_PLACE, sizes, 2, MPI_UNSIGNED_LONG, MPI_MAX, own);
  if (rc != MPI_SUCCESS || sizes[0] != window_bytes || ~sizes[1] != window_bytes) {
    MPI_Comm_free(&own);
    check_mpi(rc, "MPI_Allreduce (window size check)");
    throw Error("earlybird: ranks asked for different window sizes (set EARLYBIRD_SCRATCH_BYTES alike on every rank)");
  }
  return own;
}

MPI_Comm split_comm(MPI_Comm comm, int color, int key) {
  MPI_Comm part = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split(comm, color, key, &part), "MPI_Comm_split");
  return part;
}

}  // namespace earlybird
