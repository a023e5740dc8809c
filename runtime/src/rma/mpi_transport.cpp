#include "mpi_transport.hpp"

#include <earlybird/error.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <vector>
#include <cstring>
#include <string>

namespace earlybird {
namespace {

// MPI counts are int: move large blocks in pieces of at most 1 GiB.
constexpr std::size_t kMaxPiece = std::size_t{1} << 30;

}  // namespace

void check_mpi(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  throw Error(std::string(what) + " failed: " + std::string(text, static_cast<std::size_t>(length)));
}

MpiTransport::MpiTransport(MPI_Comm comm, std::size_t window_bytes) : bytes_(window_bytes) {
  check_mpi(MPI_Comm_dup(comm, &comm_), "MPI_Comm_dup");
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  unsigned long sizes[2] = {window_bytes, ~static_cast<unsigned long>(window_bytes)};
  check_mpi(PMPI_Allreduce(MPI_IN_PLACE, sizes, 2, MPI_UNSIGNED_LONG, MPI_MAX, comm_), "MPI_Allreduce (window size check)");
  if (sizes[0] != window_bytes || ~sizes[1] != window_bytes)
    throw Error("earlybird: ranks asked for different window sizes (set EARLYBIRD_SCRATCH_BYTES alike on every rank)");
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "accumulate_ordering", "none");
  MPI_Info_set(info, "same_size", "true");
  MPI_Info_set(info, "same_disp_unit", "true");
  const int rc = MPI_Win_allocate(static_cast<MPI_Aint>(window_bytes), 1, info, comm_, &base_, &win_);
  MPI_Info_free(&info);
  check_mpi(rc, "MPI_Win_allocate");
  MPI_Win_set_errhandler(win_, MPI_ERRORS_RETURN);
  std::memset(base_, 0, window_bytes);
  check_mpi(PMPI_Barrier(comm_), "MPI_Barrier (window set-up)");
  check_mpi(MPI_Win_lock_all(MPI_MODE_NOCHECK, win_), "MPI_Win_lock_all");
  clock_ = agree_on_clock(comm_);
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

MpiTransport::~MpiTransport() {
  try {
    close();
  } catch (...) {
    // Destructors do not throw; close() reported nothing the caller can act on.
  }
}

void MpiTransport::put(int target, std::size_t offset, const void* src, std::size_t bytes) {
  const auto* from = static_cast<const char*>(src);
  for (std::size_t done = 0; done < bytes; done += kMaxPiece) {
    const int n = static_cast<int>(std::min(kMaxPiece, bytes - done));
    check_mpi(MPI_Put(from + done, n, MPI_BYTE, target, static_cast<MPI_Aint>(offset + done), n, MPI_BYTE, win_), "MPI_Put");
  }
  check_mpi(MPI_Win_flush(target, win_), "MPI_Win_flush");
}

void MpiTransport::get(int target, std::size_t offset, void* dst, std::size_t bytes) {
  auto* to = static_cast<char*>(dst);
  for (std::size_t done = 0; done < bytes; done += kMaxPiece) {
    const int n = static_cast<int>(std::min(kMaxPiece, bytes - done));
    check_mpi(MPI_Get(to + done, n, MPI_BYTE, target, static_cast<MPI_Aint>(offset + done), n, MPI_BYTE, win_), "MPI_Get");
  }
  check_mpi(MPI_Win_flush(target, win_), "MPI_Win_flush");
}

void MpiTransport::notify(int target, std::size_t offset, std::uint64_t value) {
  check_mpi(MPI_Accumulate(&value, 1, MPI_UINT64_T, target, static_cast<MPI_Aint>(offset), 1, MPI_UINT64_T,
                           MPI_REPLACE, win_),
            "MPI_Accumulate (flag)");
  check_mpi(MPI_Win_flush(target, win_), "MPI_Win_flush (flag)");
}

std::uint64_t MpiTransport::load_flag(std::size_t offset) {
  auto* word = reinterpret_cast<std::uint64_t*>(base_ + offset);
  return std::atomic_ref<std::uint64_t>(*word).load(std::memory_order_acquire);
}

std::uint64_t MpiTransport::load_remote(int target, std::size_t offset) {
  std::uint64_t value = 0;
  check_mpi(MPI_Fetch_and_op(nullptr, &value, MPI_UINT64_T, target, static_cast<MPI_Aint>(offset), MPI_NO_OP, win_),
            "MPI_Fetch_and_op (remote read)");
  check_mpi(MPI_Win_flush(target, win_), "MPI_Win_flush (remote read)");
  return value;
}

std::uint64_t MpiTransport::fetch_add(int target, std::size_t offset, std::uint64_t value) {
  std::uint64_t previous = 0;
  check_mpi(MPI_Fetch_and_op(&value, &previous, MPI_UINT64_T, target, static_cast<MPI_Aint>(offset), MPI_SUM, win_),
            "MPI_Fetch_and_op (fetch-add)");
  check_mpi(MPI_Win_flush(target, win_), "MPI_Win_flush (fetch-add)");
  return previous;
}

// MPI_Get_accumulate with MPI_NO_OP: element-wise atomic with the flag
// updates (MPI_Accumulate) that write these words; a plain MPI_Get is not.
void MpiTransport::load_remote_words(int target, std::size_t offset, std::uint64_t* out, std::size_t count) {
  const int n = static_cast<int>(count);
  check_mpi(MPI_Get_accumulate(nullptr, 0, MPI_UINT64_T, out, n, MPI_UINT64_T, target, static_cast<MPI_Aint>(offset), n,
                               MPI_UINT64_T, MPI_NO_OP, win_),
            "MPI_Get_accumulate (remote read)");
  check_mpi(MPI_Win_flush(target, win_), "MPI_Win_flush (remote read)");
}

void MpiTransport::store_remote_words(int target, std::size_t offset, const std::uint64_t* words, std::size_t count) {
  const int n = static_cast<int>(count);
  check_mpi(MPI_Accumulate(words, n, MPI_UINT64_T, target, static_cast<MPI_Aint>(offset), n, MPI_UINT64_T, MPI_REPLACE,
                           win_),
            "MPI_Accumulate (remote store)");
  check_mpi(MPI_Win_flush(target, win_), "MPI_Win_flush (remote store)");
}

// Peers read this word with MPI_Fetch_and_op; an atomic store is the local
// counterpart that osc/sm and the in-process transport agree with.
void MpiTransport::store_local(std::size_t offset, std::uint64_t value) {
  auto* word = reinterpret_cast<std::uint64_t*>(base_ + offset);
  std::atomic_ref<std::uint64_t>(*word).store(value, std::memory_order_release);
  MPI_Win_sync(win_);
}

void MpiTransport::poll_hook() {
  MPI_Win_sync(win_);
  int flag = 0;
  MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm_, &flag, MPI_STATUS_IGNORE);
}

std::unique_ptr<Transport> MpiTransport::split(int color, int key, std::size_t window_bytes) {
  MPI_Comm part = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split(comm_, color, key, &part), "MPI_Comm_split");
  if (part == MPI_COMM_NULL) return nullptr;
  std::unique_ptr<Transport> transport;
  try {
    transport = std::make_unique<MpiTransport>(part, window_bytes);
  } catch (...) {
    MPI_Comm_free(&part);
    throw;
  }
  MPI_Comm_free(&part);
  return transport;
}

void MpiTransport::close() {
  if (win_ == MPI_WIN_NULL) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  MPI_Win_unlock_all(win_);
  MPI_Win_free(&win_);
  MPI_Comm_free(&comm_);
  win_ = MPI_WIN_NULL;
}

}  // namespace earlybird
