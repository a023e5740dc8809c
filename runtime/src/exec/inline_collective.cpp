#include "inline_collective.hpp"

#include "window_words.hpp"

#include <earlybird/error.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>

namespace earlybird {

static_assert(InlineCollective::kLines * InlineCollective::kLineBytes == WindowLayout::kInlineBytes);
// The model prices inline_flags up to coll::kInlineLinesBytes published for
// every element size.
static_assert(std::ranges::all_of(std::array<std::size_t, 4>{1, 2, 4, 8}, [](std::size_t elem) {
  return InlineCollective::capacity_elems(elem) * elem >= coll::kInlineLinesBytes;
}));

namespace {

using coll::Collective;

// A line's payload copied: a whole line's as one fixed-size copy (inlined
// moves, where a copy of a size known only at run time is a call into the C
// library per line).
void copy_payload(std::byte* to, const std::byte* from, std::size_t bytes) {
  if (bytes == InlineCollective::kPayloadBytes)
    std::memcpy(to, from, InlineCollective::kPayloadBytes);
  else
    std::memcpy(to, from, bytes);
}

}  // namespace

std::vector<std::byte*> InlineCollective::direct_windows(Transport& transport) {
  std::vector<std::byte*> windows;
  for (int r = 0; r < transport.size(); ++r) {
    std::byte* window = transport.direct_window(r);
    if (!window) return {};
    windows.push_back(window);
  }
  return windows;
}

std::size_t InlineCollective::published_elems(Collective collective, int ranks, std::size_t count) {
  return coll::inline_published(collective, ranks, count);
}

InlineCollective::InlineCollective(const std::vector<std::byte*>& windows, int rank, LaneGuard& lanes,
                                   const WindowLayout& layout, const OperationBuffers& buffers, Call call,
                                   std::uint64_t signature, Clock::duration timeout,
                                   std::shared_ptr<const std::string> description)
    : windows_(&windows),
      rank_(rank),
      size_(static_cast<int>(windows.size())),
      lanes_(&lanes),
      layout_(layout),
      buffers_(buffers),
      call_(call),
      elem_(size_of(buffers.type)),
      per_line_(kPayloadBytes / elem_),
      signature_(signature & kSignatureMask),
      watchdog_(timeout),
      description_(std::move(description)) {
  plan_role();
  if (published_elems_ > capacity_elems(elem_))
    throw Error(*description_ + ": " + std::to_string(published_elems_ * elem_) +
                " bytes do not fit the inline lines");
}

// The table in the header, for this rank.
void InlineCollective::plan_role() {
  const bool root = rank_ == call_.root;
  const std::size_t n = call_.count;
  publishes_ = call_.collective != Collective::bcast || root;
  published_elems_ = publishes_ ? published_elems(call_.collective, size_, n) : 0;
  read_begin_ = 0;
  read_end_ = size_;
  read_count_ = n;
  fold_ = call_.collective != Collective::bcast && call_.collective != Collective::allgather;
  switch (call_.collective) {
    case Collective::reduce:
      if (!root) read_end_ = 0;
      break;
    case Collective::bcast:
      read_begin_ = root ? 0 : call_.root;
      read_end_ = root ? 0 : call_.root + 1;
      break;
    case Collective::reduce_scatter:
      read_first_ = static_cast<std::size_t>(rank_) * n;
      break;
    case Collective::allreduce:
    case Collective::allgather:
      break;
  }
  next_ = read_begin_;
  if (read_count_ == 0) return;
  first_line_ = read_first_ / per_line_;
  last_line_ = (read_first_ + read_count_ - 1) / per_line_;
  first_at_ = read_first_ % per_line_;
}

bool InlineCollective::rearm(const void* input, void* output, const ReduceOp& op,
                             std::shared_ptr<const void> keep_alive) {
  if (failure_.failed()) return false;
  buffers_.input = static_cast<const std::byte*>(input);
  buffers_.output = static_cast<std::byte*>(output);
  buffers_.keep_alive = std::move(keep_alive);
  if (op.is_user()) buffers_.op = op;
  watchdog_.restart();
  sequence_ = 0;
  published_ = false;
  next_ = read_begin_;
  return true;
}

void InlineCollective::start(std::uint64_t sequence) {
  sequence_ = sequence;
  if (sequence == 0) {  // nothing to exchange (count 0, or one rank): output = input
    const std::size_t bytes = call_.count * elem_;
    if (bytes > 0 && buffers_.input && buffers_.output && buffers_.input != buffers_.output)
      std::memcpy(buffers_.output, buffers_.input, bytes);
    published_ = true;
    next_ = read_end_;
    return;
  }
  own_from_input_ = call_.collective == Collective::reduce && rank_ == call_.root &&
                    (buffers_.input != buffers_.output || rank_ == read_begin_);
  value_ = flag_value(sequence, signature_);
  lane_offset_ = layout_.inline_offset(static_cast<int>(sequence % WindowLayout::kInlineLanes));
  poll();
}

// Data first, then the line's sequence word with a release store: a reader
// that sees the word sees the data.
void InlineCollective::publish() {
  std::byte* line = lines_of(rank_);
  for (std::size_t first = 0; first < published_elems_; first += per_line_, line += kLineBytes) {
    const std::size_t n = std::min(per_line_, published_elems_ - first);
    copy_payload(line + sizeof(std::uint64_t), buffers_.input + first * elem_, n * elem_);
    store_release(line, value_);
  }
}

// The publisher writes its lines in order, each word release-stored after
// its data: the last line of the range carrying this sequence makes every
// earlier line's data visible, so only that word is waited on (the data
// lines then travel together, not one wait each). A peer that called a
// different collective shows it on the first line (a shorter call may not
// reach the last).
bool InlineCollective::ready(int rank) {
  const std::byte* lines = lines_of(rank);
  if (load_acquire(lines + last_line_ * kLineBytes) == value_) return true;
  for (std::size_t line : {first_line_, last_line_}) {
    const std::uint64_t seen = load_acquire(lines + line * kLineBytes);
    if (seen != value_ && (seen >> kSignatureBits) >= sequence_)
      fail("rank " + std::to_string(rank) +
           " called a different collective (count, type, op, root or algorithm differ, or calls are out of order)");
  }
  return false;
}

void InlineCollective::gather(int rank, std::byte* to) const {
  const std::byte* line = lines_of(rank) + first_line_ * kLineBytes;
  std::size_t at = first_at_;
  for (std::size_t left = read_count_; left > 0; line += kLineBytes, at = 0) {
    const std::size_t take = std::min(per_line_ - at, left);
    copy_payload(to, line + sizeof(std::uint64_t) + at * elem_, take * elem_);
    to += take * elem_;
    left -= take;
  }
}

// Fold: output = ((x0 op x1) op x2) ... in rank order, this rank's own part
// read from its lines too (the output may be its input). Place: rank k's
// part goes to its block of the output (allgather) or to all of it (bcast).
void InlineCollective::take(int rank) {
  if (!fold_) {
    const std::size_t block = call_.collective == Collective::allgather ? static_cast<std::size_t>(rank) : 0;
    return gather(rank, buffers_.output + block * read_count_ * elem_);
  }
  if (rank == rank_ && own_from_input_) return fold_own_input();
  if (rank == read_begin_) return gather(rank, buffers_.output);
  alignas(16) std::array<std::byte, kLines * kPayloadBytes> part;
  gather(rank, part.data());
  buffers_.op.apply(buffers_.type, buffers_.output, buffers_.output, part.data(), read_count_);
}

void InlineCollective::fold_own_input() {
  if (rank_ == read_begin_) {
    if (buffers_.input != buffers_.output) std::memcpy(buffers_.output, buffers_.input, read_count_ * elem_);
    return;
  }
  buffers_.op.apply(buffers_.type, buffers_.output, buffers_.output, buffers_.input, read_count_);
}

bool InlineCollective::poll() {
  if (finished()) return false;
  bool progressed = false;
  if (!published_) {
    if (publishes_ && !own_from_input_) {
      if (!lanes_->all_free(rank_, sequence_, WindowLayout::kInlineLanes)) {
        watch();
        return false;
      }
      publish();
    }
    published_ = true;
    progressed = true;
  }
  while (next_ < read_end_ && !failure_.failed() && readable(next_)) {
    take(next_++);
    progressed = true;
  }
  if (progressed)
    watchdog_.progressed();
  else
    watch();
  return progressed;
}

void InlineCollective::watch() {
  if (!watchdog_.idle_poll_expired()) return;
  const std::string after = watchdog_.timeout_text();
  if (!published_) return time_out("watchdog: peers did not finish the collective before this one for " + after);
  std::string waiting;
  for (int r = next_; r < read_end_; ++r)
    if (!readable(r)) waiting += (waiting.empty() ? " rank " : ", rank ") + std::to_string(r);
  time_out("watchdog: no notification arrived for " + after + "; still waiting for" + waiting);
}

std::exception_ptr InlineCollective::error() const { return failure_.error(); }

void InlineCollective::fail(const std::string& cause) {
  if (!failure_.failed()) failure_.set(std::make_exception_ptr(Error(*description_ + ": " + cause)));
}

}  // namespace earlybird
