// Sequence words of lines in directly reachable windows (the inline lines,
// exec/inline_collective.hpp; peer reads, exec/peer_reads.hpp): a writer
// release-stores the word after the line's other bytes, a reader that
// acquire-loads it sees them.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace earlybird {

inline std::uint64_t load_acquire(const std::byte* word) {
  return std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(const_cast<std::byte*>(word)))
      .load(std::memory_order_acquire);
}

inline void store_release(std::byte* word, std::uint64_t value) {
  std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(word)).store(value, std::memory_order_release);
}

}  // namespace earlybird
