// Reading another process's memory by address (Linux cross-memory attach,
// process_vm_readv): how the ranks of a shared-window communicator copy
// straight out of each other's user buffers (exec/peer_reads.hpp).
//
// The kernel allows it where the reader may ptrace the owner (same user,
// and Yama's ptrace_scope 0, or root); container seccomp filters often
// refuse it. Whether it works is therefore probed once, on every rank,
// and agreed: every rank gets the same answer.
//
// A peer's shared arena (rma/shared_arena.hpp: what earlybird::
// allocate_shared hands out) is also mapped here, with the same permission
// (pidfd_getfd), once per peer process: mapped() turns an address inside
// it into a pointer this process loads from, with no system call. Where the
// kernel refuses, or the peer has no arena, mapped() is nullptr and reads
// go through process_vm_readv; nothing is agreed, as only speed differs.
#pragma once

#include <mpi.h>

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace earlybird {

// Copies `bytes` at `address` in process `pid` into `to` (several system
// calls when the kernel returns less). Throws Error naming the kernel's
// reason when it refuses or the range is not mapped there.
void read_process_memory(pid_t pid, std::uintptr_t address, void* to, std::size_t bytes);

class PeerMemory {
 public:
  // Collective over `comm` (every rank on this node): exchanges process ids
  // and has each rank read a word of the next rank's memory; usable() only
  // when every rank could.
  explicit PeerMemory(MPI_Comm comm);
  bool usable() const { return usable_; }
  void read(int rank, std::uintptr_t address, void* to, std::size_t bytes) const {
    read_process_memory(pids_[static_cast<std::size_t>(rank)], address, to, bytes);
  }
  // Where `bytes` at `address` in `rank`'s process can be loaded from here,
  // when the range lies in that rank's mapped arena; nullptr otherwise.
  const std::byte* mapped(int rank, std::uintptr_t address, std::size_t bytes) const;

  // A peer's arena as this process maps it.
  struct Arena {
    std::uintptr_t remote = 0;  // its base in the owner's address space
    const std::byte* local = nullptr;
    std::size_t bytes = 0;
  };

 private:
  struct Published;  // what each rank tells the others at creation
  void map_arenas(int rank, const std::vector<Published>& all);

  std::vector<pid_t> pids_;
  std::vector<Arena> arenas_;  // by rank; empty where not mapped
  bool usable_ = false;
};

}  // namespace earlybird
