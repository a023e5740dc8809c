#include "mpi_transport.hpp"

#include <earlybird/future.hpp>

#include <algorithm>
#include <atomic>
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
