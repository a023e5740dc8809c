#include <earlybird/shared_memory.hpp>

#include "../rma/shared_arena.hpp"

#include <cstdlib>

namespace earlybird {
namespace {

constexpr std::size_t kAlignment = 64;

}  // namespace

void* allocate_shared(std::size_t bytes) {
  if (void* memory = SharedArena::instance().allocate(bytes)) return memory;
  const std::size_t size = (bytes == 0 ? kAlignment : (bytes + kAlignment - 1) / kAlignment * kAlignment);
  if (void* memory = std::aligned_alloc(kAlignment, size)) return memory;
  throw std::bad_alloc();
}

void free_shared(void* memory) noexcept {
  if (memory == nullptr) return;
  if (!SharedArena::instance().free(memory)) std::free(memory);
}

bool in_shared_arena(const void* memory) { return SharedArena::instance().contains(memory); }

}  // namespace earlybird
