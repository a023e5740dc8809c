// In-process transport: threads stand in for ranks, each "window" is plain
// memory, put/get are memcpy and flags are atomics. It lets the sim test tier
// run the real executor and progress engine without MPI (and under TSan).
#pragma once

#include "transport.hpp"

#include <cstdint>
#include <memory>
#include <vector>

namespace earlybird {

// The windows of all simulated ranks.
class InProcFabric {
 public:
  // node_ranks: the simulated ranks lie on nodes of this many consecutive
  // ranks (Transport::node_ranks); 0: one node. The scratch starts
  // poisoned (clear_window).
  InProcFabric(int ranks, WindowSize window, int node_ranks = 0);
  std::byte* window(int rank) { return windows_[static_cast<std::size_t>(rank)].get(); }
  std::size_t window_bytes() const { return bytes_; }
  int size() const { return static_cast<int>(windows_.size()); }
  std::int64_t clock_origin_ns() const { return origin_ns_; }
  int node_ranks() const { return node_ranks_; }

 private:
  struct FreeAligned {
    void operator()(std::byte* p) const;
  };
  std::size_t bytes_;
  int node_ranks_;
  std::int64_t origin_ns_;  // steady clock at creation: all ranks share it
  std::vector<std::unique_ptr<std::byte, FreeAligned>> windows_;
};

class InProcTransport final : public Transport {
 public:
  // by_messages: behave as a transport that reaches its peers by messages
  // (no direct windows; waits_for_messages), as the point-to-point one does.
  InProcTransport(std::shared_ptr<InProcFabric> fabric, int rank, bool by_messages = false)
      : fabric_(std::move(fabric)), rank_(rank), by_messages_(by_messages) {}
  int rank() const override { return rank_; }
  int size() const override { return fabric_->size(); }
  std::byte* window() override { return fabric_->window(rank_); }
  int node_ranks() const override { return fabric_->node_ranks(); }
  std::byte* direct_window(int rank) override { return by_messages_ ? nullptr : fabric_->window(rank); }
  bool waits_for_messages() const override { return by_messages_; }
  // One process: a peer's buffer is read with memcpy.
  bool reads_peer_memory() const override { return !by_messages_; }
  // Simulated ranks are threads of one process: every address is theirs, so
  // PeerReads loads from it and never needs read_peer_memory.
  const std::byte* mapped_peer_memory(int, std::uintptr_t address, std::size_t) override {
    return reads_peer_memory() ? reinterpret_cast<const std::byte*>(address) : nullptr;
  }
  std::size_t window_bytes() const override { return fabric_->window_bytes(); }
  // Data: memcpy between the simulated windows (bounds-checked).
  void put(int target, std::size_t offset, const void* src, std::size_t bytes) override;
  void get(int target, std::size_t offset, void* dst, std::size_t bytes) override;
  // Words: std::atomic_ref on the target's window; a release store orders a
  // notification after the puts before it, an acquire load reads it.
  void notify(int target, std::size_t offset, std::uint64_t value) override;
  void store_local(std::size_t offset, std::uint64_t value) override;
  void post_remote_words(int target, std::size_t offset, const std::uint64_t* words, std::size_t count) override;
  std::uint64_t load_flag(std::size_t offset) override;
  std::uint64_t load_remote(int target, std::size_t offset) override;
  void load_remote_words(int target, std::size_t offset, std::uint64_t* out, std::size_t count) override;
  std::uint64_t fetch_add(int target, std::size_t offset, std::uint64_t value) override;
  std::int64_t clock_origin_ns() const override { return fabric_->clock_origin_ns(); }
  std::unique_ptr<Transport> split(int color, int key, WindowSize window) override;

 private:
  void check(int target, std::size_t offset, std::size_t bytes) const;
  std::shared_ptr<InProcFabric> fabric_;
  int rank_;
  bool by_messages_;
};

}  // namespace earlybird
