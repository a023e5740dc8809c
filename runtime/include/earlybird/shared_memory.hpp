// Memory the other ranks of a node read directly (as MPI_Alloc_mem is
// memory the MPI library may treat specially).
//
// A collective whose buffers come from allocate_shared on every rank lets
// the peer_reads algorithms (docs/algorithms.md) copy and reduce straight
// out of the peers' buffers with loads, where ordinary buffers cost a
// process_vm_readv system call per read. Set CollectiveOptions::
// shared_buffers on every rank of such calls so that `auto` prices those
// algorithms at memory rates. Results do not depend on where buffers live:
// any buffer works with any algorithm.
//
// The memory is this process's (rma/shared_arena.hpp: an anonymous shared
// file, reserved sparsely at the first call; EARLYBIRD_SHARED_ARENA_GIB,
// default 64, sets the reservation); peers map it when a communicator on
// their node is created, where the kernel lets them (the same permission
// as process_vm_readv). Where the arena cannot be made or is full,
// allocate_shared returns ordinary memory: the calls still work, through
// the system call.
#pragma once

#include <cstddef>
#include <new>

namespace earlybird {

// At least `bytes` bytes aligned to 64; throws std::bad_alloc when no memory
// is left. Thread-safe; usable before any Runtime exists.
void* allocate_shared(std::size_t bytes);
// Memory from allocate_shared (nullptr: nothing).
void free_shared(void* memory) noexcept;
// Whether `memory` lies in this process's arena (not the fallback).
bool in_shared_arena(const void* memory);

// For containers: std::vector<float, earlybird::SharedAllocator<float>>.
template <class T>
struct SharedAllocator {
  using value_type = T;
  SharedAllocator() = default;
  template <class U>
  SharedAllocator(const SharedAllocator<U>&) noexcept {}
  T* allocate(std::size_t n) { return static_cast<T*>(allocate_shared(n * sizeof(T))); }
  void deallocate(T* memory, std::size_t) noexcept { free_shared(memory); }
  template <class U>
  bool operator==(const SharedAllocator<U>&) const noexcept { return true; }
};

}  // namespace earlybird
