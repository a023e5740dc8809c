#include "inline_allreduce.hpp"

#include "../config/algorithm_choice.hpp"

#include <earlybird/error.hpp>

#include <algorithm>
#include <atomic>
#include <cstring>

namespace earlybird {

// auto picks inline_flags up to this size for every element type.
static_assert(InlineAllreduce::capacity(1) >= config::kInlineFlagsBytes &&
              InlineAllreduce::capacity(8) >= config::kInlineFlagsBytes);

namespace {

std::uint64_t load_acquire(const std::byte* word) {
  return std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(const_cast<std::byte*>(word)))
      .load(std::memory_order_acquire);
}

void store_release(std::byte* word, std::uint64_t value) {
  std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(word)).store(value, std::memory_order_release);
}

}  // namespace

static_assert(InlineAllreduce::kLines * InlineAllreduce::kLineBytes == WindowLayout::kInlineBytes);

std::vector<std::byte*> InlineAllreduce::direct_windows(Transport& transport) {
  std::vector<std::byte*> windows;
  for (int r = 0; r < transport.size(); ++r) {
    std::byte* window = transport.direct_window(r);
    if (!window) return {};
    windows.push_back(window);
  }
  return windows;
}

InlineAllreduce::InlineAllreduce(const std::vector<std::byte*>& windows, int rank, LaneGuard& lanes,
                                 const WindowLayout& layout, const OperationBuffers& buffers, std::size_t count,
                                 std::uint64_t signature, Clock::duration timeout,
                                 std::shared_ptr<const std::string> description)
    : windows_(&windows),
      rank_(rank),
      size_(static_cast<int>(windows.size())),
      lanes_(&lanes),
      layout_(layout),
      buffers_(buffers),
      count_(count),
      elem_(size_of(buffers.type)),
      per_line_(kPayloadBytes / elem_),
      lines_((count + per_line_ - 1) / per_line_),
      signature_(signature & kSignatureMask),
      timeout_(timeout),
      description_(std::move(description)) {
  if (count_ * elem_ > capacity(elem_))
    throw Error(*description_ + ": " + std::to_string(count_ * elem_) + " bytes do not fit the inline lines");
}

void InlineAllreduce::start(std::uint64_t sequence) {
  sequence_ = sequence;
  if (sequence == 0) {  // nothing to exchange (count 0, or one rank)
    if (count_ > 0 && buffers_.input != buffers_.output) std::memcpy(buffers_.output, buffers_.input, count_ * elem_);
    next_ = size_;
    return;
  }
  value_ = flag_value(sequence, signature_);
  lane_offset_ = layout_.inline_offset(static_cast<int>(sequence % WindowLayout::kLanes));
  poll();
}

bool InlineAllreduce::peers_free() {
  bool free = true;
  for (int peer = 0; peer < size_; ++peer) {
    if (peer == rank_ || lanes_->free(peer, sequence_)) continue;
    lanes_->ask(peer);
    free = free && lanes_->free(peer, sequence_);
  }
  return free;
}

// Data first, then the line's sequence word with a release store: a reader
// that sees the word sees the data.
void InlineAllreduce::publish() {
  std::byte* lines = lines_of(rank_);
  for (std::size_t i = 0; i < lines_; ++i) {
    std::byte* line = lines + i * kLineBytes;
    const std::size_t first = i * per_line_;
    const std::size_t n = std::min(per_line_, count_ - first);
    std::memcpy(line + sizeof(std::uint64_t), buffers_.input + first * elem_, n * elem_);
    store_release(line, value_);
  }
  published_ = true;
}

bool InlineAllreduce::ready(int rank) {
  const std::byte* lines = lines_of(rank);
  for (std::size_t i = 0; i < lines_; ++i) {
    const std::uint64_t seen = load_acquire(lines + i * kLineBytes);
    if (seen == value_) continue;
    if ((seen >> kSignatureBits) >= sequence_)
      fail("rank " + std::to_string(rank) +
           " called a different collective (count, type, op or algorithm differ, or calls are out of order)");
    return false;
  }
  return true;
}

// Rank order: output = ((x0 op x1) op x2) ...; this rank's own vector is read
// from its lines too, since the output may be its input (in place).
void InlineAllreduce::fold(int rank) {
  const std::byte* lines = lines_of(rank);
  for (std::size_t i = 0; i < lines_; ++i) {
    const std::byte* data = lines + i * kLineBytes + sizeof(std::uint64_t);
    const std::size_t first = i * per_line_;
    const std::size_t n = std::min(per_line_, count_ - first);
    std::byte* out = buffers_.output + first * elem_;
    if (rank == 0)
      std::memcpy(out, data, n * elem_);
    else
      buffers_.op.apply(buffers_.type, out, out, data, n);
  }
}

bool InlineAllreduce::poll() {
  if (finished()) return false;
  bool progressed = false;
  if (!published_) {
    if (!peers_free()) {
      watch();
      return false;
    }
    publish();
    progressed = true;
  }
  while (next_ < size_ && !failed_.load(std::memory_order_relaxed) && ready(next_)) {
    fold(next_++);
    progressed = true;
  }
  if (progressed)
    progressed_since_watch_ = true;
  else
    watch();
  return progressed;
}

// As Operation's watchdog: the clock once per 16 idle polls; the timeout
// counts from the first look after the last progress.
void InlineAllreduce::watch() {
  constexpr std::uint32_t kPollsPerWatch = 16;
  if (++idle_polls_ % kPollsPerWatch != 0) return;
  const auto now = Clock::now();
  if (progressed_since_watch_) {
    progressed_since_watch_ = false;
    deadline_ = now + timeout_;
    return;
  }
  if (now <= deadline_) return;
  const std::string ms = std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(timeout_).count());
  if (!published_) return fail("watchdog: peers did not finish the collective before this one for " + ms + " ms");
  std::string waiting;
  for (int r = next_; r < size_; ++r)
    if (r != rank_ && !ready(r)) waiting += (waiting.empty() ? " rank " : ", rank ") + std::to_string(r);
  fail("watchdog: no notification arrived for " + ms + " ms; still waiting for" + waiting);
}

std::exception_ptr InlineAllreduce::error() const {
  std::lock_guard lock(error_mutex_);
  return error_;
}

void InlineAllreduce::fail(const std::string& cause) {
  std::lock_guard lock(error_mutex_);
  if (error_) return;
  error_ = std::make_exception_ptr(Error(*description_ + ": " + cause));
  failed_.store(true, std::memory_order_release);
}

}  // namespace earlybird
