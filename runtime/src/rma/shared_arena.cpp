#include "shared_arena.hpp"

#include "../config/environment.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <iterator>

namespace earlybird {
namespace {

std::size_t rounded_up(std::size_t bytes) {
  return (bytes + SharedArena::kAlignment - 1) / SharedArena::kAlignment * SharedArena::kAlignment;
}

}  // namespace

SharedArena& SharedArena::instance() {
  static SharedArena arena;
  return arena;
}

SharedArena::SharedArena() {
  const std::size_t wanted = config::shared_arena_bytes_from_environment();
  if (wanted == 0) return;
  const int file = memfd_create("earlybird-shared-arena", MFD_CLOEXEC);
  if (file < 0) return;
  void* base = MAP_FAILED;
  if (ftruncate(file, static_cast<off_t>(wanted)) == 0)
    base = mmap(nullptr, wanted, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, file, 0);
  if (base == MAP_FAILED) {
    close(file);
    return;
  }
  file_ = file;
  base_ = reinterpret_cast<std::uintptr_t>(base);
  bytes_ = wanted;
  *static_cast<std::uint64_t*>(base) = stamp_for(static_cast<std::uint64_t>(getpid()), base_);
  free_.emplace(kStampBytes, wanted - kStampBytes);
}

bool SharedArena::contains(const void* memory) const {
  const auto address = reinterpret_cast<std::uintptr_t>(memory);
  return usable() && address >= base_ && address - base_ < bytes_;
}

void* SharedArena::allocate(std::size_t bytes) {
  if (!usable() || bytes > bytes_) return nullptr;
  const std::size_t size = rounded_up(bytes == 0 ? 1 : bytes);
  const std::lock_guard lock(mutex_);
  for (auto range = free_.begin(); range != free_.end(); ++range) {
    if (range->second < size) continue;
    const auto [offset, length] = *range;
    free_.erase(range);
    if (length > size) free_.emplace(offset + size, length - size);
    used_.emplace(offset, size);
    return reinterpret_cast<void*>(base_ + offset);
  }
  return nullptr;
}

bool SharedArena::free(void* memory) {
  if (!contains(memory)) return false;
  const std::size_t offset = reinterpret_cast<std::uintptr_t>(memory) - base_;
  const std::lock_guard lock(mutex_);
  const auto used = used_.find(offset);
  if (used == used_.end()) return false;
  auto range = free_.emplace(offset, used->second).first;
  used_.erase(used);
  // Coalesce with the free range after, then with the one before.
  const auto after = std::next(range);
  if (after != free_.end() && range->first + range->second == after->first) {
    range->second += after->second;
    free_.erase(after);
  }
  if (range != free_.begin()) {
    const auto before = std::prev(range);
    if (before->first + before->second == range->first) {
      before->second += range->second;
      free_.erase(range);
    }
  }
  return true;
}

}  // namespace earlybird
