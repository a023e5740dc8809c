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

// Who last wrote each element range of each (rank, buffer), and who read it
// since. Whole schedules keep sorted vectors (their ranges come mostly in
// increasing order); a focused builder (one rank's plan at large P) keeps
// trees: a ring writes its chunks in decreasing order, and a vector would
// shift every later interval on each split.
struct Builder::Tracker {
  Tracker(int ranks, bool focused, bool input_may_be_output) : input_may_be_output_(input_may_be_output) {
    const auto maps = static_cast<std::size_t>(ranks) * 3;
    if (focused)
      trees.resize(maps);
    else
      vectors.resize(maps);
  }
  // Calls f(piece, access) for the intervals of slot's range, split at its
  // ends so that f may change them.
  template <class F>
  void for_each(const Slot& slot, F&& f) {
    if (trees.empty())
      vectors[index(slot)].for_each(slot.range, f);
    else
      trees[index(slot)].for_each(slot.range, f);
  }
  template <class F>
  void visit(const Slot& slot, F&& f) const {
    if (trees.empty())
      vectors[index(slot)].visit(slot.range, f);
    else
      trees[index(slot)].visit(slot.range, f);
  }

 private:
  // Where input and output may be one buffer they share one map: an
  // in-place call makes them the same memory, so an output write must also
  // wait for earlier input reads. They may where the input is at least as
  // large as the output (allreduce, reduce, bcast: one buffer; reduce-scatter:
  // the result lands at the start of the input's buffer), as
  // detail::input_aliases_output says for the verifier. A smaller input (an
  // allgather's block) never is the output's memory: allgather_in_place
  // gives it a private copy, and tracking it at output's offset 0 would only
  // add false dependencies on block 0.
  std::size_t index(const Slot& slot) const {
    const Buffer tracked = slot.buffer == Buffer::input && input_may_be_output_ ? Buffer::output : slot.buffer;
    return static_cast<std::size_t>(slot.rank) * 3 + static_cast<std::size_t>(tracked);
  }
  bool input_may_be_output_;
  std::vector<detail::IntervalMap<Access>> vectors;
  std::vector<detail::IntervalMap<Access, detail::IntervalStorage::tree>> trees;
};

Builder::Builder(std::string algorithm, int ranks, std::size_t count)
    : Builder(std::move(algorithm), ranks, count, Shape{count, count}) {}

Builder::Builder(std::string algorithm, int ranks, std::size_t count, Shape shape)
    : algorithm_(std::move(algorithm)), ranks_(ranks), count_(count), shape_(shape) {
  if (ranks < 1) throw std::invalid_argument("Builder: ranks must be >= 1");
  tracker_ = std::make_unique<Tracker>(ranks, false, shape_.input >= shape_.output);
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

void Builder::keep_only(std::vector<int> ranks) {
  if (!steps_.empty()) throw std::logic_error(algorithm_ + ": keep_only after steps were added");
  for (int r : ranks)
    if (r < 0 || r >= ranks_) throw std::invalid_argument(algorithm_ + ": keep_only names rank " + std::to_string(r));
  if (ranks.empty() && kept_.empty()) return;
  kept_.clear();
  tracker_ = std::make_unique<Tracker>(ranks_, !ranks.empty(), shape_.input >= shape_.output);
  if (ranks.empty()) return;
  kept_.assign(static_cast<std::size_t>(ranks_), 0);
  for (int r : ranks) kept_[static_cast<std::size_t>(r)] = 1;
}

std::vector<int> Builder::kept_ranks() const {
  std::vector<int> ranks;
  for (int r = 0; r < ranks_; ++r)
    if (keeps(r)) ranks.push_back(r);
  return ranks;
}

StepId Builder::put(Slot src, Slot dst) { return transfer(StepKind::put, src, dst); }

StepId Builder::get(Slot src, Slot dst) { return transfer(StepKind::get, src, dst); }

// A put runs on the source's rank and writes a peer's scratch; a get runs on
// the destination's rank and reads a peer's scratch.
StepId Builder::transfer(StepKind kind, Slot src, Slot dst) {
  if (!keeps(src.rank) && !keeps(dst.rank)) return kNoStep;
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
  if (!keeps(dst.rank)) return kNoStep;  // all on one rank (checked below when kept)
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
  if (!keeps(dst.rank)) return kNoStep;  // both on one rank (checked below when kept)
  dst = rebased(dst);
  src = rebased(src);
  if (src.range.empty() && dst.range.empty()) return kNoStep;
  if (src.rank != dst.rank) throw std::logic_error(algorithm_ + ": copy across ranks");
  return add({StepKind::copy, dst.rank, src, dst, {}}, src, nullptr, dst);
}

void Builder::copy_input_to_output() {
  require_same_shape("copy_input_to_output");
  for (int r : kept_ranks()) copy({r, Buffer::output, {0, count_}}, {r, Buffer::input, {0, count_}});
}

void Builder::copy_unwritten_output() {
  require_same_shape("copy_unwritten_output");
  for (int r : kept_ranks()) {
    std::vector<Range> unwritten;
    tracker_->visit({r, Buffer::output, {0, count_}}, [&](Range piece, const Access& a) {
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
  const std::size_t first = dep_ids_.size();
  auto after_writer = [&](Range, Access& a) {
    if (a.last_writer != kNoStep) dep_ids_.push_back(a.last_writer);
  };
  tracker_->for_each(read_a, after_writer);
  if (read_b) tracker_->for_each(*read_b, after_writer);
  tracker_->for_each(write, [&](Range piece, Access& a) {
    after_writer(piece, a);
    if (!skip_write_after_read_) dep_ids_.insert(dep_ids_.end(), a.readers.begin(), a.readers.end());
  });
  const auto deps = dep_ids_.begin() + static_cast<std::ptrdiff_t>(first);
  std::sort(deps, dep_ids_.end());
  dep_ids_.erase(std::unique(deps, dep_ids_.end()), dep_ids_.end());
  dep_end_.push_back(dep_ids_.size());

  tracker_->for_each(read_a, [&](Range, Access& a) { a.readers.push_back(id); });
  if (read_b) tracker_->for_each(*read_b, [&](Range, Access& a) { a.readers.push_back(id); });
  tracker_->for_each(write, [&](Range, Access& a) {
    a.last_writer = id;
    a.readers.clear();
  });
  steps_.push_back(step);
  return id;
}

void Builder::add_dependency(StepId step, StepId on) {
  if (step >= steps_.size() || on >= steps_.size())
    throw std::logic_error(algorithm_ + ": add_dependency names a step that does not exist");
  added_deps_.emplace_back(step, on);
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
  std::sort(added_deps_.begin(), added_deps_.end());
  auto added = added_deps_.begin();
  for (std::size_t t = 0; t < n; ++t) {
    const auto first = dep_ids_.begin() + static_cast<std::ptrdiff_t>(t == 0 ? 0 : dep_end_[t - 1]);
    const auto last = dep_ids_.begin() + static_cast<std::ptrdiff_t>(dep_end_[t]);
    s.dep_ids_.insert(s.dep_ids_.end(), first, last);
    for (; added != added_deps_.end() && added->first == t; ++added)
      if (std::find(first, last, added->second) == last) s.dep_ids_.push_back(added->second);
    for (auto d = s.dep_ids_.begin() + static_cast<std::ptrdiff_t>(s.dep_begin_.back()); d != s.dep_ids_.end(); ++d)
      if (steps_[*d].owner != steps_[t].owner) edges.emplace_back(*d, steps_[t].owner);
    s.dep_begin_.push_back(s.dep_ids_.size());
  }
  std::vector<StepId>().swap(dep_ids_);
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
