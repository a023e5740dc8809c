#include <earlybird/collectives/builder.hpp>

#include "interval_map.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <stdexcept>

namespace earlybird::coll {
namespace {

// Who last wrote an element range, and who read it since.
struct Access {
  StepId last_writer = Builder::kNoStep;
  std::vector<StepId> readers;
};

}  // namespace

struct Builder::Tracker {
  explicit Tracker(int ranks) : maps(static_cast<std::size_t>(ranks) * 3) {}
  // Input and output share one map: an in-place call makes them the same
  // memory, so an output write must also wait for earlier input reads.
  detail::IntervalMap<Access>& of(const Slot& slot) {
    const Buffer tracked = slot.buffer == Buffer::input ? Buffer::output : slot.buffer;
    return maps[static_cast<std::size_t>(slot.rank) * 3 + static_cast<std::size_t>(tracked)];
  }
  std::vector<detail::IntervalMap<Access>> maps;
};

Builder::Builder(std::string algorithm, int ranks, std::size_t count)
    : Builder(std::move(algorithm), ranks, count, Shape{count, count}) {}

Builder::Builder(std::string algorithm, int ranks, std::size_t count, Shape shape)
    : algorithm_(std::move(algorithm)), ranks_(ranks), count_(count), shape_(shape) {
  if (ranks < 1) throw std::invalid_argument("Builder: ranks must be >= 1");
  tracker_ = std::make_unique<Tracker>(ranks);
  scratch_base_.assign(static_cast<std::size_t>(ranks), 0);
  scratch_high_.assign(static_cast<std::size_t>(ranks), 0);
}
Builder::~Builder() = default;
Builder::Builder(Builder&&) noexcept = default;
Builder& Builder::operator=(Builder&&) noexcept = default;

void Builder::check_slot(const Slot& slot, const char* what) const {
  auto fail = [&](const std::string& why) {
    throw std::logic_error(algorithm_ + ": " + what + " slot " + why);
  };
  if (slot.rank < 0 || slot.rank >= ranks_) fail("names rank " + std::to_string(slot.rank));
  if (slot.buffer == Buffer::scratch) return;
  const std::size_t size = slot.buffer == Buffer::input ? shape_.input : shape_.output;
  if (slot.range.end() > size)
    fail("runs past the " + std::string(to_string(slot.buffer)) + " buffer (" + std::to_string(slot.range.end()) +
         " > " + std::to_string(size) + ")");
}

Slot Builder::rebased(Slot slot) {
  if (slot.buffer != Buffer::scratch || slot.rank < 0 || slot.rank >= ranks_) return slot;
  const auto r = static_cast<std::size_t>(slot.rank);
  slot.range.begin += scratch_base_[r];
  scratch_high_[r] = std::max(scratch_high_[r], slot.range.end());
  return slot;
}

void Builder::begin_scratch_region() { scratch_base_ = scratch_high_; }

StepId Builder::put(Slot src, Slot dst) { return transfer(StepKind::put, src, dst); }

StepId Builder::get(Slot src, Slot dst) { return transfer(StepKind::get, src, dst); }

// A put runs on the source's rank and writes a peer's scratch; a get runs on
// the destination's rank and reads a peer's scratch.
StepId Builder::transfer(StepKind kind, Slot src, Slot dst) {
  src = rebased(src);
  dst = rebased(dst);
  if (src.range.empty() && dst.range.empty()) return kNoStep;
  const bool put = kind == StepKind::put;
  if ((put ? dst : src).buffer != Buffer::scratch)
    throw std::logic_error(algorithm_ + (put ? ": put must target scratch" : ": get must read scratch"));
  if (src.rank == dst.rank) throw std::logic_error(algorithm_ + (put ? ": put to self" : ": get from self"));
  return add({kind, put ? src.rank : dst.rank, src, dst, {}}, src, nullptr, dst);
}

StepId Builder::reduce(Slot dst, Slot src) { return reduce(dst, dst, src); }

StepId Builder::reduce(Slot dst, Slot left, Slot right) {
  dst = rebased(dst);
  left = rebased(left);
  right = rebased(right);
  if (right.range.empty() && dst.range.empty()) return kNoStep;
  if (right.rank != dst.rank || left.rank != dst.rank) throw std::logic_error(algorithm_ + ": reduce across ranks");
  check_operand(left, dst);
  check_operand(right, dst);
  if (left.range.count != dst.range.count)
    throw std::logic_error(algorithm_ + ": left operand and destination differ in length");
  return add({StepKind::reduce, dst.rank, right, dst, left}, right, &left, dst);
}

// Kernels combine element i of each operand into element i of dst: an operand
// may be dst itself or lie elsewhere, but must not partly overlap it.
void Builder::check_operand(const Slot& operand, const Slot& dst) const {
  const bool same_memory = operand.buffer == dst.buffer ||
                           (operand.buffer != Buffer::scratch && dst.buffer != Buffer::scratch);
  if (same_memory && operand.range.overlaps(dst.range) && operand.range != dst.range)
    throw std::logic_error(algorithm_ + ": reduce operand partly overlaps its destination");
}

StepId Builder::copy(Slot dst, Slot src) {
  dst = rebased(dst);
  src = rebased(src);
  if (src.range.empty() && dst.range.empty()) return kNoStep;
  if (src.rank != dst.rank) throw std::logic_error(algorithm_ + ": copy across ranks");
  return add({StepKind::copy, dst.rank, src, dst, {}}, src, nullptr, dst);
}

void Builder::copy_input_to_output() {
  require_same_shape("copy_input_to_output");
  for (int r = 0; r < ranks_; ++r)
    copy({r, Buffer::output, {0, count_}}, {r, Buffer::input, {0, count_}});
}

void Builder::copy_unwritten_output() {
  require_same_shape("copy_unwritten_output");
  for (int r = 0; r < ranks_; ++r) {
    std::vector<Range> unwritten;
    tracker_->of({r, Buffer::output, {}}).visit({0, count_}, [&](Range piece, const Access& a) {
      if (a.last_writer == kNoStep) unwritten.push_back(piece);
    });
    for (const Range& piece : unwritten) copy({r, Buffer::output, piece}, {r, Buffer::input, piece});
  }
}

void Builder::require_same_shape(const char* what) const {
  if (shape_.input != shape_.output)
    throw std::logic_error(algorithm_ + ": " + what + " needs input and output of one length");
}

StepId Builder::add(Step step, const Slot& read_a, const Slot* read_b, const Slot& write) {
  check_slot(read_a, "source");
  if (read_b) check_slot(*read_b, "left operand");
  check_slot(write, "destination");
  if (write.buffer == Buffer::input) throw std::logic_error(algorithm_ + ": writes the input buffer");
  if (read_a.range.count != write.range.count)
    throw std::logic_error(algorithm_ + ": source and destination differ in length");

  const auto id = static_cast<StepId>(steps_.size());
  std::vector<StepId> deps;
  auto after_writer = [&](Range, Access& a) {
    if (a.last_writer != kNoStep) deps.push_back(a.last_writer);
  };
  tracker_->of(read_a).for_each(read_a.range, after_writer);
  if (read_b) tracker_->of(*read_b).for_each(read_b->range, after_writer);
  tracker_->of(write).for_each(write.range, [&](Range piece, Access& a) {
    after_writer(piece, a);
    if (!skip_write_after_read_)
      deps.insert(deps.end(), a.readers.begin(), a.readers.end());
  });
  std::sort(deps.begin(), deps.end());
  deps.erase(std::unique(deps.begin(), deps.end()), deps.end());

  tracker_->of(read_a).for_each(read_a.range, [&](Range, Access& a) { a.readers.push_back(id); });
  if (read_b) tracker_->of(*read_b).for_each(read_b->range, [&](Range, Access& a) { a.readers.push_back(id); });
  tracker_->of(write).for_each(write.range, [&](Range, Access& a) {
    a.last_writer = id;
    a.readers.clear();
  });
  steps_.push_back(step);
  deps_.push_back(std::move(deps));
  return id;
}

void Builder::add_dependency(StepId step, StepId on) {
  if (step >= steps_.size() || on >= steps_.size())
    throw std::logic_error(algorithm_ + ": add_dependency names a step that does not exist");
  auto& deps = deps_[step];
  if (std::find(deps.begin(), deps.end(), on) == deps.end()) deps.push_back(on);
}

Schedule Builder::finish() && {
  Schedule s;
  s.algorithm_ = std::move(algorithm_);
  s.ranks_ = ranks_;
  s.count_ = count_;
  s.shape_ = shape_;
  const std::size_t n = steps_.size();
  const auto ranks = static_cast<std::size_t>(ranks_);

  s.dep_begin_.reserve(n + 1);
  s.dep_begin_.push_back(0);
  // (source step, receiving rank) pairs: one notification each.
  std::vector<std::pair<StepId, int>> edges;
  for (std::size_t t = 0; t < n; ++t) {
    for (StepId d : deps_[t]) {
      s.dep_ids_.push_back(d);
      if (steps_[d].owner != steps_[t].owner) edges.emplace_back(d, steps_[t].owner);
    }
    s.dep_begin_.push_back(s.dep_ids_.size());
    std::vector<StepId>().swap(deps_[t]);
  }
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());

  s.flag_count_.assign(ranks, 0);
  s.note_begin_.assign(n + 1, 0);
  s.note_list_.reserve(edges.size());
  std::size_t e = 0;
  for (std::size_t step = 0; step < n; ++step) {
    s.note_begin_[step] = s.note_list_.size();
    for (; e < edges.size() && edges[e].first == step; ++e) {
      const int target = edges[e].second;
      s.note_list_.push_back({target, s.flag_count_[static_cast<std::size_t>(target)]++});
    }
  }
  s.note_begin_[n] = s.note_list_.size();

  s.scratch_elems_.assign(ranks, 0);
  for (const Step& step : steps_)
    for (const Slot* slot : {&step.src, &step.dst})
      if (slot->buffer == Buffer::scratch) {
        auto& high = s.scratch_elems_[static_cast<std::size_t>(slot->rank)];
        high = std::max(high, slot->range.end());
      }
  s.steps_ = std::move(steps_);
  return s;
}

}  // namespace earlybird::coll
