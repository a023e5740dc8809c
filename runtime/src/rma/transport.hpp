// Transport: the one-sided operations the executor needs, over some window of
// memory per rank. Two implementations: MPI RMA (real runs) and an in-process
// one (the sim test tier, threads as ranks).
//
// Every call except load_flag is made by the holder of the communicator's
// drive only (exec/driver.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace earlybird {

// A window's size, and how much of its start must read zero before its first
// use (WindowLayout: the header, the arrival board, the inline lines and the
// flags); the rest is scratch, always written before it is read, so a
// transport leaves it untouched: zeroing 16 MiB per rank would fault in
// every page and evict the caches the communicator's first call needs.
struct WindowSize {
  std::size_t bytes = 0;
  std::size_t zeroed = 0;
};

// Maps [begin, begin + bytes) in, rounded out to whole pages, without
// changing a byte (MADV_POPULATE_WRITE; where the kernel lacks it, a read of
// each page, which maps shared memory writable and private memory not).
// Safe while other processes write the same memory.
void fault_in_pages(std::byte* begin, std::size_t bytes);

// Zeroes a new window's first window.zeroed bytes, and with poison_scratch
// fills the rest with 0xff bytes (NaN as a float or double, -1 as an
// integer), so that a read of scratch nothing wrote spoils a checked result
// instead of reading whatever the memory held: the sim tier always, the
// real transports in sanitizer builds (EARLYBIRD_POISON_SCRATCH), where the
// cost of touching every page does not matter.
#ifdef EARLYBIRD_POISON_SCRATCH
inline constexpr bool kPoisonScratch = true;
#else
inline constexpr bool kPoisonScratch = false;
#endif
void clear_window(std::byte* base, WindowSize window, bool poison_scratch = kPoisonScratch);

class Transport {
 public:
  virtual ~Transport() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Ranks per node when the ranks span several nodes of that many
  // consecutive ranks each (what the hierarchical algorithms and the cost
  // model's two levels need); 0 for one node or any other layout.
  virtual int node_ranks() const { return 0; }
  // This rank's window (zero-initialised at creation).
  virtual std::byte* window() = 0;
  virtual std::size_t window_bytes() const = 0;
  // `rank`'s window when this process can load and store it directly (a
  // shared-memory window, or simulated ranks); nullptr otherwise.
  virtual std::byte* direct_window(int /*rank*/) { return nullptr; }
  // True when this process can copy from any address of every rank's
  // process: a peer's user buffers (exec/peer_reads.hpp). Agreed by all
  // ranks at creation, so every rank gives the same answer.
  virtual bool reads_peer_memory() const { return false; }
  // Copies `bytes` at `address` in `rank`'s process into `to`. Throws Error
  // with the kernel's reason when it refuses (a freed buffer, a bad address).
  virtual void read_peer_memory(int rank, std::uintptr_t address, void* to, std::size_t bytes);
  // Where this process can load `bytes` at `address` in `rank`'s process
  // from directly (a peer's shared arena, earlybird/shared_memory.hpp, or a
  // simulated rank's memory); nullptr where only read_peer_memory reaches it.
  virtual const std::byte* mapped_peer_memory(int /*rank*/, std::uintptr_t /*address*/, std::size_t /*bytes*/) {
    return nullptr;
  }

  // Copies `bytes` from local memory into target's window at `offset`; the data
  // is complete at the target when the call returns.
  virtual void put(int target, std::size_t offset, const void* src, std::size_t bytes) = 0;
  // Copies `bytes` from target's window at `offset` into local memory.
  virtual void get(int target, std::size_t offset, void* dst, std::size_t bytes) = 0;
  // Atomically stores `value` into the 64-bit flag word at `offset` of target's
  // window, ordered after every put this rank completed to target before.
  virtual void notify(int target, std::size_t offset, std::uint64_t value) = 0;
  // put(target, offset, ...) then notify(target, flag_offset, value): a step
  // that sends data and raises the receiver's flag for it. A transport that
  // pays per message carries both in one.
  virtual void put_notify(int target, std::size_t offset, const void* src, std::size_t bytes, std::size_t flag_offset,
                          std::uint64_t value) {
    put(target, offset, src, bytes);
    notify(target, flag_offset, value);
  }
  // Atomic acquire load of a flag word in this rank's own window.
  virtual std::uint64_t load_flag(std::size_t offset) = 0;
  // Atomic read of a 64-bit word in target's window (a round trip).
  virtual std::uint64_t load_remote(int target, std::size_t offset) = 0;
  // Atomic release store into a 64-bit word of this rank's own window.
  virtual void store_local(std::size_t offset, std::uint64_t value) = 0;
  // Atomically adds `value` to the 64-bit word at `offset` of target's window
  // and returns the word's previous value (a round trip).
  virtual std::uint64_t fetch_add(int target, std::size_t offset, std::uint64_t value) = 0;
  // Reads `count` consecutive 64-bit words of target's window, each atomically
  // (not as a snapshot), into `out` (one round trip).
  virtual void load_remote_words(int target, std::size_t offset, std::uint64_t* out, std::size_t count) = 0;
  // Stores `count` 64-bit words into target's window, each atomically
  // (MPI_Accumulate with MPI_REPLACE). It may return before they are stored
  // (the point-to-point transport sends them as one message and waits for
  // no answer; the others store at once), but they are stored before any
  // later operation of this rank on `target` is applied there. Readers of
  // such words poll for them (the arrival board).
  virtual void post_remote_words(int target, std::size_t offset, const std::uint64_t* words, std::size_t count) = 0;
  // This rank's steady clock minus rank 0's, in nanoseconds, as measured when
  // the transport was created (0 when all ranks share one clock).
  virtual std::int64_t clock_offset_ns() const { return 0; }
  // Rank 0's steady clock, in nanoseconds, when the transport was created:
  // the origin of the communicator's global time (see pap/global_clock.hpp).
  virtual std::int64_t clock_origin_ns() const = 0;
  // Called between polls so the library can make passive-target progress, or
  // (needs_service) so this transport can apply its peers' requests. Returns
  // true when it did something.
  virtual bool poll_hook() { return false; }
  // True when the transport must be polled even while its communicator has no
  // collective active (the point-to-point transport: peers' requests).
  virtual bool needs_service() const { return false; }
  // True when a wait on this transport is for a message that another
  // machine's CPUs and the network move (the point-to-point transport), not
  // for a store by a rank of this node: a poller may then sleep between
  // polls instead of yielding (Backoff::for_messages).
  virtual bool waits_for_messages() const { return false; }
  // True while a message this rank sent has not left it (the point-to-point
  // transport: a send MPI has not completed, a rendezvous waiting for this
  // rank's progress). A collective that sent is not finished before they
  // complete: a caller that returned would leave them to the next call into
  // MPI here, and a blocking 64 KiB reduce followed by 2 ms of computation
  // kept its root waiting 2.1 ms, not 0.15 (2 x 1 emulated hosts). Tests
  // them on the way (progress).
  virtual bool sends_pending() { return false; }
  // A transport over the ranks passing the same color (MPI_Comm_split order),
  // with a window of `window` (its first window.zeroed bytes zero). Collective
  // over this transport's ranks.
  virtual std::unique_ptr<Transport> split(int color, int key, WindowSize window) = 0;
  // Makes the pages of [offset, offset + bytes) of this rank's window, and of
  // every peer's window it stores into directly, present and writable, their
  // contents unchanged (fault_in_pages), so that the communicator's first
  // collectives take no page faults there. Not collective.
  virtual void fault_in(std::size_t /*offset*/, std::size_t /*bytes*/) {}
  // Releases the window. Collective; called once, with no operation active.
  virtual void close() {}
};

}  // namespace earlybird
