#include "mpi_transport.hpp"

#include "base/streaming_copy.hpp"
#include "topo/topology.hpp"

#include <earlybird/error.hpp>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>

namespace earlybird {
namespace {

// MPI counts are int: move large blocks in pieces of at most 1 GiB.
constexpr std::size_t kMaxPiece = std::size_t{1} << 30;

// Puts from this size into a peer's window on this node use streaming stores
// (base/streaming_copy.hpp), unless ranks share cores: a writer and a reader
// on one core share its cache, which those stores bypass. On the project's
// VM at P = 2, allreduce in a loop of calls: 2 MiB (1 MiB puts) 347-387 ->
// 177-242 us, 4 MiB 630-723 -> 436-447; a barrier before each call: 2 MiB
// 0.80x, 4-16 MiB level. Puts of 128-512 KiB were up to 19 % slower with
// them (their lines still fit the reader's cache). docs/benchmarks.md,
// "Puts with streaming stores".
constexpr std::size_t kStreamingPutBytes = std::size_t{1} << 20;

void copy_into_window(void* to, const void* from, std::size_t bytes) {
  if (bytes >= kStreamingPutBytes && !topo::cores_shared_with_other_ranks())
    copy_streaming(to, from, bytes);
  else
    std::memcpy(to, from, bytes);
}

}  // namespace

MpiTransport::MpiTransport(MPI_Comm comm, WindowSize window, bool allow_shared)
    : bytes_(window.bytes), allow_shared_(allow_shared) {
  comm_ = duplicate_for_transport(comm, window.bytes);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  const NodeLayout layout = node_layout(comm_);
  node_ranks_ = layout.uniform_ranks;
  const bool shared = allow_shared && layout.nodes == 1;
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "accumulate_ordering", "none");
  MPI_Info_set(info, "same_size", "true");
  MPI_Info_set(info, "same_disp_unit", "true");
  if (shared) MPI_Info_set(info, "alloc_shared_noncontig", "true");  // each rank's part on its own NUMA node
  const auto size = static_cast<MPI_Aint>(window.bytes);
  const int rc = shared ? MPI_Win_allocate_shared(size, 1, info, comm_, &base_, &win_)
                        : MPI_Win_allocate(size, 1, info, comm_, &base_, &win_);
  MPI_Info_free(&info);
  if (rc != MPI_SUCCESS) MPI_Comm_free(&comm_);
  check_mpi(rc, shared ? "MPI_Win_allocate_shared" : "MPI_Win_allocate");
  MPI_Win_set_errhandler(win_, MPI_ERRORS_RETURN);
  try {
    if (shared) {
      find_peer_windows();
      peer_memory_.emplace(comm_);
    }
    clear_window(base_, window);
    check_mpi(PMPI_Barrier(comm_), "MPI_Barrier (window set-up)");
    check_mpi(MPI_Win_lock_all(MPI_MODE_NOCHECK, win_), "MPI_Win_lock_all");
    clock_ = agree_on_clock(comm_);
  } catch (...) {
    close();  // a constructor that throws runs no destructor
    throw;
  }
}

void MpiTransport::find_peer_windows() {
  peers_.resize(static_cast<std::size_t>(size_));
  for (int r = 0; r < size_; ++r) {
    MPI_Aint bytes = 0;
    int disp_unit = 0;
    void* base = nullptr;
    check_mpi(MPI_Win_shared_query(win_, r, &bytes, &disp_unit, &base), "MPI_Win_shared_query");
    peers_[static_cast<std::size_t>(r)] = static_cast<std::byte*>(base);
  }
}

void MpiTransport::read_peer_memory(int rank, std::uintptr_t address, void* to, std::size_t bytes) {
  if (!reads_peer_memory()) return Transport::read_peer_memory(rank, address, to, bytes);
  peer_memory_->read(rank, address, to, bytes);
}

std::uint64_t& MpiTransport::word(int target, std::size_t offset) const {
  return *reinterpret_cast<std::uint64_t*>(peers_[static_cast<std::size_t>(target)] + offset);
}

MpiTransport::~MpiTransport() {
  try {
    close();
  } catch (...) {
    // Destructors do not throw; close() reported nothing the caller can act on.
  }
}

void MpiTransport::put(int target, std::size_t offset, const void* src, std::size_t bytes) {
  if (direct()) return copy_into_window(peers_[static_cast<std::size_t>(target)] + offset, src, bytes);
  const auto* from = static_cast<const char*>(src);
  for (std::size_t done = 0; done < bytes; done += kMaxPiece) {
    const int n = static_cast<int>(std::min(kMaxPiece, bytes - done));
    check_mpi(MPI_Put(from + done, n, MPI_BYTE, target, static_cast<MPI_Aint>(offset + done), n, MPI_BYTE, win_), "MPI_Put");
  }
  check_mpi(MPI_Win_flush(target, win_), "MPI_Win_flush");
}

void MpiTransport::get(int target, std::size_t offset, void* dst, std::size_t bytes) {
  if (direct()) {
    std::memcpy(dst, peers_[static_cast<std::size_t>(target)] + offset, bytes);
    return;
  }
  auto* to = static_cast<char*>(dst);
  for (std::size_t done = 0; done < bytes; done += kMaxPiece) {
    const int n = static_cast<int>(std::min(kMaxPiece, bytes - done));
    check_mpi(MPI_Get(to + done, n, MPI_BYTE, target, static_cast<MPI_Aint>(offset + done), n, MPI_BYTE, win_), "MPI_Get");
  }
  check_mpi(MPI_Win_flush(target, win_), "MPI_Win_flush");
}

// Direct: a release store orders the flag after this thread's copies before it.
void MpiTransport::notify(int target, std::size_t offset, std::uint64_t value) {
  if (direct()) return std::atomic_ref<std::uint64_t>(word(target, offset)).store(value, std::memory_order_release);
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
  if (direct()) return std::atomic_ref<std::uint64_t>(word(target, offset)).load(std::memory_order_acquire);
  std::uint64_t value = 0;
  check_mpi(MPI_Fetch_and_op(nullptr, &value, MPI_UINT64_T, target, static_cast<MPI_Aint>(offset), MPI_NO_OP, win_),
            "MPI_Fetch_and_op (remote read)");
  check_mpi(MPI_Win_flush(target, win_), "MPI_Win_flush (remote read)");
  return value;
}

std::uint64_t MpiTransport::fetch_add(int target, std::size_t offset, std::uint64_t value) {
  if (direct()) return std::atomic_ref<std::uint64_t>(word(target, offset)).fetch_add(value, std::memory_order_acq_rel);
  std::uint64_t previous = 0;
  check_mpi(MPI_Fetch_and_op(&value, &previous, MPI_UINT64_T, target, static_cast<MPI_Aint>(offset), MPI_SUM, win_),
            "MPI_Fetch_and_op (fetch-add)");
  check_mpi(MPI_Win_flush(target, win_), "MPI_Win_flush (fetch-add)");
  return previous;
}

// MPI_Get_accumulate with MPI_NO_OP: element-wise atomic with the flag
// updates (MPI_Accumulate) that write these words; a plain MPI_Get is not.
void MpiTransport::load_remote_words(int target, std::size_t offset, std::uint64_t* out, std::size_t count) {
  if (direct()) {
    for (std::size_t i = 0; i < count; ++i) out[i] = load_remote(target, offset + i * sizeof(std::uint64_t));
    return;
  }
  const int n = static_cast<int>(count);
  check_mpi(MPI_Get_accumulate(nullptr, 0, MPI_UINT64_T, out, n, MPI_UINT64_T, target, static_cast<MPI_Aint>(offset), n,
                               MPI_UINT64_T, MPI_NO_OP, win_),
            "MPI_Get_accumulate (remote read)");
  check_mpi(MPI_Win_flush(target, win_), "MPI_Win_flush (remote read)");
}

void MpiTransport::post_remote_words(int target, std::size_t offset, const std::uint64_t* words, std::size_t count) {
  if (direct()) {
    for (std::size_t i = 0; i < count; ++i) notify(target, offset + i * sizeof(std::uint64_t), words[i]);
    return;
  }
  const int n = static_cast<int>(count);
  check_mpi(MPI_Accumulate(words, n, MPI_UINT64_T, target, static_cast<MPI_Aint>(offset), n, MPI_UINT64_T, MPI_REPLACE,
                           win_),
            "MPI_Accumulate (remote store)");
  check_mpi(MPI_Win_flush(target, win_), "MPI_Win_flush (remote store)");
}

// Peers read this word with MPI_Fetch_and_op (or, direct, an atomic load);
// an atomic store is the local counterpart both agree with.
void MpiTransport::store_local(std::size_t offset, std::uint64_t value) {
  auto* word = reinterpret_cast<std::uint64_t*>(base_ + offset);
  std::atomic_ref<std::uint64_t>(*word).store(value, std::memory_order_release);
  if (!direct()) MPI_Win_sync(win_);
}

// MPI_Iprobe drives Open MPI's progress engine (and reads the clock there):
// it costs several times a flag poll, and a shared-memory window needs it
// not at all, so it runs once per kPollsPerProbe idle polls.
bool MpiTransport::poll_hook() {
  constexpr unsigned kPollsPerProbe = 16;
  if (direct()) return false;  // nothing travels through MPI
  MPI_Win_sync(win_);
  if (++idle_polls_ % kPollsPerProbe != 0) return false;
  int flag = 0;
  MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm_, &flag, MPI_STATUS_IGNORE);
  return false;
}

void MpiTransport::fault_in(std::size_t offset, std::size_t bytes) {
  if (offset >= bytes_) return;
  bytes = std::min(bytes, bytes_ - offset);
  if (!direct()) return fault_in_pages(base_ + offset, bytes);
  for (std::byte* window : peers_) fault_in_pages(window + offset, bytes);
}

std::unique_ptr<Transport> MpiTransport::split(int color, int key, WindowSize window) {
  return split_transport<MpiTransport>(comm_, color, key, window, allow_shared_);
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
