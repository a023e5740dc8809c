#include "peer_memory.hpp"

#include "mpi_comm.hpp"
#include "shared_arena.hpp"
#include "transport.hpp"

#include <earlybird/error.hpp>

#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

namespace earlybird {
namespace {

// What rank `rank`'s probe word holds.
std::uint64_t probe_value(int rank) { return 0x9e3779b97f4a7c15ULL ^ static_cast<std::uint64_t>(rank); }

// A read-only mapping of process `pid`'s arena (its descriptor `file` there),
// made once per process and kept until exit: every communicator with that
// peer shares it. nullopt where the kernel refuses.
std::optional<PeerMemory::Arena> map_arena(pid_t pid, int file, std::uintptr_t remote, std::size_t bytes) {
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_getfd)
  static std::mutex mutex;
  static std::map<std::pair<pid_t, std::uintptr_t>, PeerMemory::Arena> mapped;
  const std::lock_guard lock(mutex);
  if (const auto known = mapped.find({pid, remote}); known != mapped.end()) return known->second;
  const long process = syscall(SYS_pidfd_open, pid, 0);
  if (process < 0) return std::nullopt;
  const long copy = syscall(SYS_pidfd_getfd, static_cast<int>(process), file, 0);
  close(static_cast<int>(process));
  if (copy < 0) return std::nullopt;
  void* local = mmap(nullptr, bytes, PROT_READ, MAP_SHARED | MAP_NORESERVE, static_cast<int>(copy), 0);
  close(static_cast<int>(copy));
  if (local == MAP_FAILED) return std::nullopt;
  // The descriptor is the peer's arena only if its stamp says so (a process
  // id from another namespace would name another process).
  if (*static_cast<const std::uint64_t*>(local) != SharedArena::stamp_for(static_cast<std::uint64_t>(pid), remote)) {
    munmap(local, bytes);
    return std::nullopt;
  }
  const PeerMemory::Arena arena{remote, static_cast<const std::byte*>(local), bytes};
  mapped.emplace(std::pair{pid, remote}, arena);
  return arena;
#else
  (void)pid, (void)file, (void)remote, (void)bytes;
  return std::nullopt;
#endif
}

}  // namespace

struct PeerMemory::Published {
  unsigned long long pid, probe, arena_file, arena_base, arena_bytes;
};

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
  const SharedArena& arena = SharedArena::instance();
  const Published mine{static_cast<unsigned long long>(getpid()),
                       static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(&probe)),
                       static_cast<unsigned long long>(arena.usable() ? arena.file() : -1), arena.base(),
                       arena.bytes()};
  constexpr int kPublishedWords = sizeof(Published) / sizeof(unsigned long long);
  std::vector<Published> all(static_cast<std::size_t>(size));
  check_mpi(PMPI_Allgather(&mine, kPublishedWords, MPI_UNSIGNED_LONG_LONG, all.data(), kPublishedWords,
                           MPI_UNSIGNED_LONG_LONG, comm),
            "MPI_Allgather (process ids)");
  for (const Published& peer : all) pids_.push_back(static_cast<pid_t>(peer.pid));
  int works = 1;
  if (size > 1) {
    const int next = (rank + 1) % size;
    std::uint64_t seen = 0;
    try {
      read(next, static_cast<std::uintptr_t>(all[static_cast<std::size_t>(next)].probe), &seen, sizeof seen);
      works = seen == probe_value(next);
    } catch (const Error&) {
      works = 0;
    }
  }
  check_mpi(PMPI_Allreduce(MPI_IN_PLACE, &works, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce (peer reads)");
  usable_ = works == 1;
  if (usable_) map_arenas(rank, all);
}

void PeerMemory::map_arenas(int rank, const std::vector<Published>& all) {
  arenas_.resize(all.size());
  for (std::size_t r = 0; r < all.size(); ++r) {
    const Published& peer = all[r];
    if (peer.arena_bytes == 0) continue;
    if (static_cast<int>(r) == rank) {
      arenas_[r] = {peer.arena_base, reinterpret_cast<const std::byte*>(peer.arena_base), peer.arena_bytes};
    } else if (const auto mapping = map_arena(static_cast<pid_t>(peer.pid), static_cast<int>(peer.arena_file),
                                              peer.arena_base, peer.arena_bytes)) {
      arenas_[r] = *mapping;
    }
  }
}

const std::byte* PeerMemory::mapped(int rank, std::uintptr_t address, std::size_t bytes) const {
  if (arenas_.empty()) return nullptr;
  const Arena& arena = arenas_[static_cast<std::size_t>(rank)];
  if (arena.local == nullptr || address < arena.remote) return nullptr;
  const std::size_t offset = address - arena.remote;
  if (offset > arena.bytes || bytes > arena.bytes - offset) return nullptr;
  return arena.local + offset;
}

}  // namespace earlybird
