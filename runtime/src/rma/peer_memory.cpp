#include "peer_memory.hpp"

#include "mpi_comm.hpp"
#include "transport.hpp"

#include <earlybird/error.hpp>

#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace earlybird {
namespace {

// What rank `rank`'s probe word holds.
std::uint64_t probe_value(int rank) { return 0x9e3779b97f4a7c15ULL ^ static_cast<std::uint64_t>(rank); }

}  // namespace

void Transport::read_peer_memory(int rank, std::uintptr_t, void*, std::size_t) {
  throw Error("this transport cannot read rank " + std::to_string(rank) + "'s memory");
}

void read_process_memory(pid_t pid, std::uintptr_t address, void* to, std::size_t bytes) {
  auto* into = static_cast<std::byte*>(to);
  while (bytes > 0) {
    const iovec local{into, bytes};
    const iovec remote{reinterpret_cast<void*>(address), bytes};
    const ssize_t got = process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (got <= 0) {
      const int error = got < 0 ? errno : EFAULT;
      throw Error("process_vm_readv of " + std::to_string(bytes) + " bytes from process " + std::to_string(pid) +
                  " failed: " + std::strerror(error));
    }
    into += got;
    address += static_cast<std::uintptr_t>(got);
    bytes -= static_cast<std::size_t>(got);
  }
}

PeerMemory::PeerMemory(MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  // The word the previous rank reads; it lives until the agreement below,
  // which no rank passes before every rank has read.
  const std::uint64_t probe = probe_value(rank);
  const unsigned long long mine[2] = {static_cast<unsigned long long>(getpid()),
                                      static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(&probe))};
  std::vector<unsigned long long> all(2 * static_cast<std::size_t>(size));
  check_mpi(PMPI_Allgather(mine, 2, MPI_UNSIGNED_LONG_LONG, all.data(), 2, MPI_UNSIGNED_LONG_LONG, comm),
            "MPI_Allgather (process ids)");
  for (int r = 0; r < size; ++r) pids_.push_back(static_cast<pid_t>(all[2 * static_cast<std::size_t>(r)]));
  int works = 1;
  if (size > 1) {
    const int next = (rank + 1) % size;
    std::uint64_t seen = 0;
    try {
      read(next, static_cast<std::uintptr_t>(all[2 * static_cast<std::size_t>(next) + 1]), &seen, sizeof seen);
      works = seen == probe_value(next);
    } catch (const Error&) {
      works = 0;
    }
  }
  check_mpi(PMPI_Allreduce(MPI_IN_PLACE, &works, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce (peer reads)");
  usable_ = works == 1;
}

}  // namespace earlybird
