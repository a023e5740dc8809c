#include "operation.hpp"


#include <earlybird/error.hpp>

#include <algorithm>
#include <cstring>

#include "tbb_handoff.hpp"

namespace earlybird {
namespace {

using coll::Buffer;
using coll::PlanStep;
using coll::StepKind;

// Below this many bytes a copy or reduction runs inline: a task hand-off
// costs more than the work. Above it, it becomes a TBB task when the rank's
// thread budget has at least two threads.
constexpr std::size_t kInlineComputeBytes = 64 * 1024;
// Grain for splitting one large reduction across TBB workers.
constexpr std::size_t kSplitGrainBytes = 256 * 1024;

// Steps readied while a thread is already draining its work list are queued
// there instead of recursing: dependency chains can be thousands long.
struct WorkItem {
  Operation* op;
  std::uint32_t step;
};
thread_local std::vector<WorkItem>* tl_work = nullptr;

}  // namespace

Operation::Operation(std::shared_ptr<const coll::RankPlan> plan, std::shared_ptr<Binding> binding,
                     OperationContext context, OperationBuffers buffers, std::uint64_t signature,
                     Clock::duration timeout, std::shared_ptr<const std::string> description)
    : plan_(std::move(plan)),
      binding_(std::move(binding)),
      ctx_(context),
      buf_(buffers),
      elem_(size_of(buffers.type)),
      signature_(signature & kSignatureMask),
      watchdog_(timeout),
      description_(std::move(description)) {}

void Operation::start(std::uint64_t sequence) {
  sequence_ = sequence;
  // Only a transport that sends messages has sends to wait for; one that
  // exchanges nothing sent none.
  sends_settled_.store(sequence == 0 || !ctx_.transport->waits_for_messages(), std::memory_order_relaxed);
  const bool small = !ctx_.plan_may_change &&
                     ctx_.layout.fits_lane(true, plan_->max_scratch_elems * elem_, plan_->max_flags);
  lane_ = WindowLayout::lane_of(sequence, small);
  if (sequence == 0) return run_plan();  // nothing to exchange: no binding, no peer to wait for
  remaining_.store(1, std::memory_order_relaxed);  // not finished while deciding
  try {
    if (binding_->begin()) run_decided_plan();
  } catch (const std::exception& e) {
    fail(std::string("arrival entry failed: ") + e.what());
  }
}

void Operation::run_decided_plan() {
  if (auto decided = binding_->decided_plan()) plan_ = std::move(decided);
  run_plan();
}

void Operation::run_plan() {
  const auto& steps = plan_->steps;
  if (steps.size() <= kInlineSteps) {
    waits_ = inline_waits_.data();
  } else {
    heap_waits_ = std::make_unique<std::atomic<std::uint32_t>[]>(steps.size());
    waits_ = heap_waits_.get();
  }
  for (std::size_t i = 0; i < steps.size(); ++i) waits_[i].store(steps[i].waits, std::memory_order_relaxed);
  remaining_.store(steps.size(), std::memory_order_relaxed);
  unseen_flags_.resize(plan_->flags);
  for (std::uint32_t f = 0; f < plan_->flags; ++f) unseen_flags_[f] = f;
  for (std::uint32_t i = 0; i < steps.size(); ++i)
    if (steps[i].waits == 0) dispatch(i);
}

bool Operation::finished() const {
  if (inflight_tasks_.load(std::memory_order_acquire) != 0) return false;
  if (failure_.failed()) return true;
  return remaining_.load(std::memory_order_acquire) == 0 && sends_settled_.load(std::memory_order_acquire);
}

bool Operation::settle_sends() {
  if (sends_settled_.load(std::memory_order_relaxed) || remaining_.load(std::memory_order_acquire) != 0) return false;
  const bool settled = !ctx_.transport->sends_pending();
  sends_settled_.store(settled, std::memory_order_release);
  return settled;
}

std::exception_ptr Operation::error() const { return failure_.error(); }

void Operation::fail(const std::string& cause) {
  if (!failure_.failed()) failure_.set(std::make_exception_ptr(Error(*description_ + ": " + cause)));
}

std::byte* Operation::local(Buffer buffer, coll::Range range) const {
  switch (buffer) {
    case Buffer::input: return const_cast<std::byte*>(buf_.input) + placed(buffer, range.begin) * elem_;
    case Buffer::output: return buf_.output + placed(buffer, range.begin) * elem_;
    case Buffer::scratch: return ctx_.transport->window() + scratch_offset(range);
  }
  return nullptr;
}

std::size_t Operation::placed(Buffer buffer, std::size_t planned) const {
  const BlockStride& b = buf_.blocks;
  if (b.stride_elems == 0 || buffer != b.buffer) return planned;
  return planned / b.block_elems * b.stride_elems + planned % b.block_elems;
}

std::size_t Operation::contiguous_from(Buffer buffer, std::size_t planned) const {
  const BlockStride& b = buf_.blocks;
  if (b.stride_elems == 0 || buffer != b.buffer) return SIZE_MAX;
  return b.block_elems - planned % b.block_elems;
}

std::size_t Operation::scratch_offset(coll::Range range) const {
  return ctx_.layout.scratch_offset(lane_.index) + range.begin * elem_;
}

void Operation::dispatch(std::uint32_t step) {
  if (tl_work) {
    tl_work->push_back({this, step});
    return;
  }
  std::vector<WorkItem> work{{this, step}};
  tl_work = &work;
  while (!work.empty()) {
    const WorkItem item = work.back();
    work.pop_back();
    item.op->dispatch_now(item.step);
  }
  tl_work = nullptr;
}

void Operation::dispatch_now(std::uint32_t step) {
  if (failure_.failed()) return;
  const PlanStep& s = plan_->steps[step];
  const bool transfer = s.kind == StepKind::put || s.kind == StepKind::get;
  if (transfer && !ctx_.driver->held_here()) {
    ctx_.driver->post([self = shared_from_this(), step] { self->dispatch(step); });
    return;
  }
  if (transfer && !targets_ready(s, true)) {
    parked_.push_back({step, Phase::execute});
    return;
  }
  // A task hand-off pays only when another core can take it: with a budget
  // of one thread per rank the worker would just time-share this core.
  if (!transfer && ctx_.engine->worker_threads() >= 2 && s.src.count * elem_ > kInlineComputeBytes) {
    inflight_tasks_.fetch_add(1, std::memory_order_acq_rel);
    detail::enqueue(ctx_.engine->arena(), [self = shared_from_this(), step] { self->run_compute_task(step); });
    return;
  }
  try {
    execute(s, false);
  } catch (const std::exception& e) {
    return fail(std::string(coll::to_string(s.kind)) + " step failed: " + e.what());
  }
  finish_step(step);
}

void Operation::run_compute_task(std::uint32_t step) {
  if (!failure_.failed()) {
    try {
      execute(plan_->steps[step], true);
      finish_step(step);
    } catch (const std::exception& e) {
      fail(std::string("reduction task failed: ") + e.what());
    }
  }
  inflight_tasks_.fetch_sub(1, std::memory_order_acq_rel);
}

bool Operation::notifies_with_put(const PlanStep& s) const {
  return s.kind == StepKind::put && s.note_end == s.note_begin + 1 && plan_->notes[s.note_begin].target == s.peer &&
         buf_.blocks.stride_elems == 0;
}

void Operation::execute(const PlanStep& s, bool may_split) {
  if (notifies_with_put(s)) {
    const coll::Notification& note = plan_->notes[s.note_begin];
    ctx_.transport->put_notify(real_rank(s.peer), scratch_offset(s.dst), local(s.src_buffer, s.src),
                               s.src.count * elem_, ctx_.layout.flag_offset(lane_.index, note.flag),
                               flag_value(sequence_, signature_));
    return;
  }
  if (buf_.blocks.stride_elems == 0) return execute_piece(s, s.src, s.dst, s.left, may_split);
  // Strided blocks: one piece per run of elements contiguous in every buffer.
  std::size_t done = 0;
  do {
    std::size_t n = std::min({s.src.count - done, contiguous_from(s.src_buffer, s.src.begin + done),
                              contiguous_from(s.dst_buffer, s.dst.begin + done)});
    if (s.kind == StepKind::reduce) n = std::min(n, contiguous_from(s.left_buffer, s.left.begin + done));
    execute_piece(s, {s.src.begin + done, n}, {s.dst.begin + done, n}, {s.left.begin + done, n}, may_split);
    done += n;
  } while (done < s.src.count);
}

void Operation::execute_piece(const PlanStep& s, coll::Range src, coll::Range dst, coll::Range left, bool may_split) {
  const std::size_t bytes = src.count * elem_;
  switch (s.kind) {
    case StepKind::put:
      ctx_.transport->put(real_rank(s.peer), scratch_offset(dst), local(s.src_buffer, src), bytes);
      return;
    case StepKind::get:
      ctx_.transport->get(real_rank(s.peer), scratch_offset(src), local(s.dst_buffer, dst), bytes);
      return;
    case StepKind::copy: {
      const std::byte* from = local(s.src_buffer, src);
      std::byte* to = local(s.dst_buffer, dst);
      if (from != to) std::memcpy(to, from, bytes);  // in place: input aliases output
      return;
    }
    case StepKind::reduce: {
      std::byte* to = local(s.dst_buffer, dst);
      const std::byte* lhs = local(s.left_buffer, left);
      const std::byte* rhs = local(s.src_buffer, src);
      if (!may_split || ctx_.engine->worker_threads() < 2 || bytes < 2 * kSplitGrainBytes) {
        buf_.op.apply(buf_.type, to, lhs, rhs, src.count);
        return;
      }
      detail::parallel_ranges(src.count, kSplitGrainBytes / elem_, [&](std::size_t begin, std::size_t end) {
        const std::size_t offset = begin * elem_;
        buf_.op.apply(buf_.type, to + offset, lhs + offset, rhs + offset, end - begin);
      });
      return;
    }
  }
}

void Operation::finish_step(std::uint32_t step) {
  const PlanStep& s = plan_->steps[step];
  if (s.note_end != s.note_begin && !notifies_with_put(s)) {
    if (!ctx_.driver->held_here()) {
      ctx_.driver->post([self = shared_from_this(), step] { self->finish_step(step); });
      return;
    }
    if (!targets_ready(s, false)) {
      parked_.push_back({step, Phase::notify});
      return;
    }
    const std::uint64_t value = flag_value(sequence_, signature_);
    try {
      for (std::uint32_t n = s.note_begin; n < s.note_end; ++n) {
        const coll::Notification& note = plan_->notes[n];
        ctx_.transport->notify(real_rank(note.target), ctx_.layout.flag_offset(lane_.index, note.flag), value);
      }
    } catch (const std::exception& e) {
      return fail(std::string("notification failed: ") + e.what());
    }
  }
  for (std::uint32_t i = s.succ_begin; i < s.succ_end; ++i) satisfy(plan_->successors[i]);
  remaining_.fetch_sub(1, std::memory_order_acq_rel);
}

void Operation::satisfy(std::uint32_t step) {
  if (waits_[step].fetch_sub(1, std::memory_order_acq_rel) == 1) dispatch(step);
}

}  // namespace earlybird
