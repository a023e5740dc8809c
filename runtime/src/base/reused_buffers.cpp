#include "reused_buffers.hpp"

#include <algorithm>

namespace earlybird {

std::shared_ptr<const std::vector<std::byte>> ReusedBuffers::copy_of(const void* from, std::size_t bytes) {
  std::unique_ptr<Buffer> buffer = take(bytes);
  const auto* begin = static_cast<const std::byte*>(from);
  buffer->assign(begin, begin + bytes);  // within its capacity: no new memory
  return std::shared_ptr<Buffer>(buffer.release(), [self = shared_from_this()](Buffer* b) { self->take_back(b); });
}

// The smallest free buffer that holds `bytes`, else the largest free one (it
// grows), else a new one.
std::unique_ptr<ReusedBuffers::Buffer> ReusedBuffers::take(std::size_t bytes) {
  std::lock_guard lock(mutex_);
  if (free_.empty()) return std::make_unique<Buffer>();
  auto capacity = [](const std::unique_ptr<Buffer>& b) { return b->capacity(); };
  auto best = std::max_element(free_.begin(), free_.end(),
                               [&](const auto& a, const auto& b) { return capacity(a) < capacity(b); });
  for (auto it = free_.begin(); it != free_.end(); ++it)
    if (capacity(*it) >= bytes && capacity(*it) < capacity(*best)) best = it;
  std::unique_ptr<Buffer> taken = std::move(*best);
  free_.erase(best);
  return taken;
}

void ReusedBuffers::take_back(Buffer* buffer) {
  std::unique_ptr<Buffer> owned(buffer);
  std::lock_guard lock(mutex_);
  free_.push_back(std::move(owned));
  std::sort(free_.begin(), free_.end(), [](const auto& a, const auto& b) { return a->capacity() > b->capacity(); });
  if (free_.size() > kKeptBuffers) free_.pop_back();  // the smallest
  while (kept_bytes() > kKeptBytes) free_.erase(free_.begin());  // the largest
}

std::size_t ReusedBuffers::kept_bytes() const {
  std::size_t total = 0;
  for (const auto& b : free_) total += b->capacity();
  return total;
}

std::size_t ReusedBuffers::kept() const {
  std::lock_guard lock(mutex_);
  return free_.size();
}

}  // namespace earlybird
