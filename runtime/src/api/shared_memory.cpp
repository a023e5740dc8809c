#include <earlybird/shared_memory.hpp>

#include "../rma/shared_arena.hpp"

#include <cstdlib>
#include <limits>
#include <new>

namespace earlybird {

// Outside the arena (none, or full): ordinary memory of the same alignment.
void* allocate_shared(std::size_t bytes) {
  if (void* memory = SharedArena::instance().allocate(bytes)) return memory;
  constexpr std::size_t kAlignment = SharedArena::kAlignment;
  if (bytes > std::numeric_limits<std::size_t>::max() - kAlignment) throw std::bad_alloc();
  const std::size_t size = bytes == 0 ? kAlignment : (bytes + kAlignment - 1) / kAlignment * kAlignment;
  if (void* memory = std::aligned_alloc(kAlignment, size)) return memory;
  throw std::bad_alloc();
}

void free_shared(void* memory) noexcept {
  if (memory == nullptr) return;
  if (!SharedArena::instance().free(memory)) std::free(memory);
}

bool in_shared_arena(const void* memory) { return SharedArena::instance().contains(memory); }

}  // namespace earlybird
