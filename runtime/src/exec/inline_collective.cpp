#include "inline_collective.hpp"

#include "window_words.hpp"

#include <earlybird/error.hpp>

#include <cstring>

namespace earlybird {

static_assert(InlineCollective::kLines * InlineCollective::kLineBytes == WindowLayout::kInlineBytes);

using coll::Collective;

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

// Data first, then the sequence word with a release store: a reader that
// sees the word sees the data.
void InlineCollective::publish() {
  std::byte* lines = lines_of(rank_);
  std::memcpy(lines + coll::kInlinePayloadOffset, buffers_.input, published_elems_ * elem_);
  store_release(lines, value_);
}

// The sequence word in the first line, always one (never data): a peer that
// called a different collective shows it there.
bool InlineCollective::ready(int rank) {
  const std::uint64_t seen = load_acquire(lines_of(rank));
  if (seen == value_) return true;
  if ((seen >> kSignatureBits) >= sequence_)
    fail(different_collective("rank " + std::to_string(rank)));
  return false;
}

const std::byte* InlineCollective::part_of(int rank) const {
  return lines_of(rank) + coll::kInlinePayloadOffset + read_first_ * elem_;
}

// Fold: output = ((x0 op x1) op x2) ... in rank order, this rank's own part
// read from its lines too (the output may be its input). Place: rank k's
// part goes to its block of the output (allgather) or to all of it (bcast).
void InlineCollective::take(int rank) {
  const std::size_t bytes = read_count_ * elem_;
  if (!fold_) {
    const std::size_t block = call_.collective == Collective::allgather ? static_cast<std::size_t>(rank) : 0;
    std::memcpy(buffers_.output + block * bytes, part_of(rank), bytes);
    return;
  }
  if (rank == rank_ && own_from_input_) return fold_own_input();
  if (rank == read_begin_) {
    std::memcpy(buffers_.output, part_of(rank), bytes);
    return;
  }
  buffers_.op.apply(buffers_.type, buffers_.output, buffers_.output, part_of(rank), read_count_);
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
