// Reading another process's memory by address (Linux cross-memory attach,
// process_vm_readv): how the ranks of a shared-window communicator copy
// straight out of each other's user buffers (exec/peer_reads.hpp).
//
// The kernel allows it where the reader may ptrace the owner (same user,
// and Yama's ptrace_scope 0, or root); container seccomp filters often
// refuse it. Whether it works is therefore probed once, on every rank,
// and agreed: every rank gets the same answer.
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

 private:
  std::vector<pid_t> pids_;
  bool usable_ = false;
};

}  // namespace earlybird
