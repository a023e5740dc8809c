#include "inproc_transport.hpp"

#include <earlybird/error.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

namespace earlybird {

InProcFabric::InProcFabric(int ranks, WindowSize window, int node_ranks)
    : bytes_(window.bytes),
      node_ranks_(node_ranks),
      origin_ns_(std::chrono::duration_cast<std::chrono::nanoseconds>(
                     std::chrono::steady_clock::now().time_since_epoch()).count()) {
  for (int r = 0; r < ranks; ++r) {
    auto* memory = static_cast<std::byte*>(std::aligned_alloc(64, (bytes_ + 63) / 64 * 64 + 64));
    if (!memory) throw std::bad_alloc();
    clear_window(memory, window, /*poison_scratch=*/true);
    windows_.emplace_back(memory);
  }
}

void InProcFabric::FreeAligned::operator()(std::byte* p) const { std::free(p); }

void InProcTransport::check(int target, std::size_t offset, std::size_t bytes) const {
  if (target < 0 || target >= size() || offset + bytes > fabric_->window_bytes())
    throw Error("in-process transport: access outside rank " + std::to_string(target) + "'s window");
}

void InProcTransport::put(int target, std::size_t offset, const void* src, std::size_t bytes) {
  check(target, offset, bytes);
  std::memcpy(fabric_->window(target) + offset, src, bytes);
}

void InProcTransport::get(int target, std::size_t offset, void* dst, std::size_t bytes) {
  check(target, offset, bytes);
  std::memcpy(dst, fabric_->window(target) + offset, bytes);
}

void InProcTransport::notify(int target, std::size_t offset, std::uint64_t value) {
  check(target, offset, sizeof value);
  auto* word = reinterpret_cast<std::uint64_t*>(fabric_->window(target) + offset);
  std::atomic_ref<std::uint64_t>(*word).store(value, std::memory_order_release);
}

std::uint64_t InProcTransport::load_flag(std::size_t offset) {
  auto* word = reinterpret_cast<std::uint64_t*>(window() + offset);
  return std::atomic_ref<std::uint64_t>(*word).load(std::memory_order_acquire);
}

std::uint64_t InProcTransport::load_remote(int target, std::size_t offset) {
  check(target, offset, sizeof(std::uint64_t));
  auto* word = reinterpret_cast<std::uint64_t*>(fabric_->window(target) + offset);
  return std::atomic_ref<std::uint64_t>(*word).load(std::memory_order_acquire);
}

void InProcTransport::store_local(std::size_t offset, std::uint64_t value) {
  auto* word = reinterpret_cast<std::uint64_t*>(window() + offset);
  std::atomic_ref<std::uint64_t>(*word).store(value, std::memory_order_release);
}

std::uint64_t InProcTransport::fetch_add(int target, std::size_t offset, std::uint64_t value) {
  check(target, offset, sizeof value);
  auto* word = reinterpret_cast<std::uint64_t*>(fabric_->window(target) + offset);
  return std::atomic_ref<std::uint64_t>(*word).fetch_add(value, std::memory_order_acq_rel);
}

void InProcTransport::load_remote_words(int target, std::size_t offset, std::uint64_t* out, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) out[i] = load_remote(target, offset + i * sizeof(std::uint64_t));
}

void InProcTransport::post_remote_words(int target, std::size_t offset, const std::uint64_t* words,
                                        std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) notify(target, offset + i * sizeof(std::uint64_t), words[i]);
}

std::unique_ptr<Transport> InProcTransport::split(int, int, WindowSize) {
  throw Error("earlybird: split is not available on the in-process (sim) transport");
}

}  // namespace earlybird
