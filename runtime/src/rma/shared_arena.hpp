// SharedArena: this process's memory that the other ranks of its node can
// map and read directly (earlybird/shared_memory.hpp allocates from it).
//
// One anonymous shared-memory file (memfd) per process, reserved at its
// first use as a large sparse range of address space (pages are only
// backed once written; EARLYBIRD_SHARED_ARENA_GIB sets the reservation,
// default 64 GiB; 0 turns the arena off). Node peers obtain the file descriptor from this process
// (pidfd_getfd, allowed where process_vm_readv is) and map the same pages
// (rma/peer_memory.hpp), so a peer read of an address inside the arena is
// a load from the reader's mapping: no system call per read.
//
// The arena's first line holds a stamp (stamp_for: this process's id and
// the arena's base), which a peer checks in its mapping before trusting it.
// Allocation is first fit over a free list of 64-byte-aligned ranges,
// coalesced on free; freed pages are not returned to the kernel (as
// malloc keeps its heap). Where memfd or the reservation fails, usable()
// is false and allocate_shared falls back to ordinary memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>

namespace earlybird {

class SharedArena {
 public:
  // The process's arena, reserved on the first call (thread-safe).
  static SharedArena& instance();

  bool usable() const { return base_ != 0; }
  int file() const { return file_; }
  std::uintptr_t base() const { return base_; }
  std::size_t bytes() const { return bytes_; }
  bool contains(const void* memory) const;

  // What the first word of process `pid`'s arena at `base` holds.
  static std::uint64_t stamp_for(std::uint64_t pid, std::uintptr_t base) {
    return 0x6561726c79626972ULL ^ (pid * 0x9e3779b97f4a7c15ULL) ^ base;
  }
  // Every allocation's alignment and granule: a cache line, so two
  // allocations never share one.
  static constexpr std::size_t kAlignment = 64;
  // The bytes at the arena's start the stamp keeps from allocation.
  static constexpr std::size_t kStampBytes = kAlignment;

  // nullptr when the arena is unusable or full.
  void* allocate(std::size_t bytes);
  // `memory` from allocate(); returns false (and does nothing) otherwise.
  bool free(void* memory);

 private:
  SharedArena();

  int file_ = -1;
  std::uintptr_t base_ = 0;
  std::size_t bytes_ = 0;
  std::mutex mutex_;
  std::map<std::size_t, std::size_t> free_;  // offset -> bytes, disjoint, coalesced
  std::map<std::size_t, std::size_t> used_;  // offset -> bytes
};

}  // namespace earlybird
