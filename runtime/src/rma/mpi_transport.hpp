// MPI RMA transport. One window per communicator, held under one
// passive-target lock (MPI_Win_lock_all with MPI_MODE_NOCHECK) for the
// communicator's life.
//
// Direct (every rank on this node): the window is MPI_Win_allocate_shared,
// and every operation is a load, store or copy into a peer's part, found
// with MPI_Win_shared_query: put/get = memcpy, notify = atomic release
// store, remote reads and fetch-add = atomics. No MPI call on the data path.
// Direct transports also read peers' user buffers where the kernel lets
// them (peer_memory.hpp).
//
// Otherwise MPI_Win_allocate (create/dynamic windows need the target to
// enter MPI for atomics). Notification = MPI_Put of the data, MPI_Win_flush,
// then MPI_Accumulate (MPI_REPLACE) of the 64-bit flag word and a flush. The
// target reads its own flag words with atomic acquire loads; between polls it
// calls MPI_Win_sync and (now and then) MPI_Iprobe, because some MPI
// libraries make passive-target progress only inside MPI calls.
// MPI_Compare_and_swap is avoided: it crashes the target on allocate windows
// in Open MPI 4.1.4.
#pragma once

#include "mpi_comm.hpp"
#include "peer_memory.hpp"
#include "transport.hpp"

#include <mpi.h>

#include <optional>
#include <vector>

namespace earlybird {

class MpiTransport final : public Transport {
 public:
  // Duplicates `comm` and allocates a window of `window.bytes` on each rank,
  // its first window.zeroed bytes zero, shared (direct) when `allow_shared`
  // and every rank is on this node. Collective. All ranks must ask for the
  // same size.
  MpiTransport(MPI_Comm comm, WindowSize window, bool allow_shared = true);
  ~MpiTransport() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::byte* window() override { return base_; }
  int node_ranks() const override { return node_ranks_; }
  std::byte* direct_window(int rank) override { return direct() ? peers_[static_cast<std::size_t>(rank)] : nullptr; }
  bool reads_peer_memory() const override { return peer_memory_ && peer_memory_->usable(); }
  void read_peer_memory(int rank, std::uintptr_t address, void* to, std::size_t bytes) override;
  const std::byte* mapped_peer_memory(int rank, std::uintptr_t address, std::size_t bytes) override {
    return reads_peer_memory() ? peer_memory_->mapped(rank, address, bytes) : nullptr;
  }
  std::size_t window_bytes() const override { return bytes_; }
  void put(int target, std::size_t offset, const void* src, std::size_t bytes) override;
  void get(int target, std::size_t offset, void* dst, std::size_t bytes) override;
  void notify(int target, std::size_t offset, std::uint64_t value) override;
  std::uint64_t load_flag(std::size_t offset) override;
  std::uint64_t load_remote(int target, std::size_t offset) override;
  void store_local(std::size_t offset, std::uint64_t value) override;
  std::uint64_t fetch_add(int target, std::size_t offset, std::uint64_t value) override;
  void load_remote_words(int target, std::size_t offset, std::uint64_t* out, std::size_t count) override;
  void post_remote_words(int target, std::size_t offset, const std::uint64_t* words, std::size_t count) override;
  std::int64_t clock_offset_ns() const override { return clock_.offset_ns; }
  std::int64_t clock_origin_ns() const override { return clock_.origin_ns; }
  bool poll_hook() override;
  std::unique_ptr<Transport> split(int color, int key, WindowSize window) override;
  void fault_in(std::size_t offset, std::size_t bytes) override;
  void close() override;

 private:
  bool direct() const { return !peers_.empty(); }
  void find_peer_windows();
  std::uint64_t& word(int target, std::size_t offset) const;

  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Win win_ = MPI_WIN_NULL;
  unsigned idle_polls_ = 0;  // poll_hook calls (by the drive holder)
  std::byte* base_ = nullptr;
  std::size_t bytes_ = 0;
  bool allow_shared_ = true;
  int node_ranks_ = 0;
  std::vector<std::byte*> peers_;  // every rank's window, when direct
  std::optional<PeerMemory> peer_memory_;  // when direct
  int rank_ = 0;
  int size_ = 0;
  ClockSync clock_;
};

}  // namespace earlybird
