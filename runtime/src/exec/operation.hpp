// Operation: one rank's execution of one RankPlan (one collective, or one
// batch of a large one), a pure dataflow executor: it knows the plan, the
// buffers, the transport and a Binding (which rank stands at each virtual
// rank, and for arrival-ordered collectives which plan runs), nothing of
// queues, arrival boards or algorithms. Steps become ready as their local
// predecessors finish and the flags they wait for arrive; ready steps are
// dispatched:
//   put / get                -> the thread holding the drive (exec/driver.hpp:
//                               the progress thread, or a caller running a
//                               small collective itself);
//   small copy / reduce      -> run inline by whichever thread readied them;
//   large copy / reduce      -> a oneTBB task (split further with parallel_for).
// Notifications a step raises are sent by the drive's holder after the step
// (for a put: after its data is complete at the target).
#pragma once

#include "../progress/progress_engine.hpp"
#include "binding.hpp"
#include "collective_task.hpp"
#include "watchdog.hpp"
#include "driver.hpp"
#include "lane_guard.hpp"
#include "../rma/transport.hpp"
#include "../rma/window_layout.hpp"

#include <earlybird/collectives/plan.hpp>
#include <earlybird/types.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace earlybird {

struct OperationContext {
  Transport* transport = nullptr;
  ProgressEngine* engine = nullptr;  // its TBB arena and thread budget
  Driver* driver = nullptr;          // who may call the transport
  LaneGuard* lanes = nullptr;
  WindowLayout layout;
  // The plan may be replaced when the binding decides (an arrival-ordered
  // stand-in): such an operation takes a large lane, whatever its plan.
  bool plan_may_change = false;
};

// Where a blockwise buffer's blocks lie when they are not where the plan
// puts them: a batch of an allgather (output) or reduce_scatter (input) runs
// a plan for P blocks of `block_elems` elements, but in the user's buffer the
// blocks are `stride_elems` apart (the whole call's count).
struct BlockStride {
  coll::Buffer buffer = coll::Buffer::output;
  std::size_t block_elems = 0;
  std::size_t stride_elems = 0;  // 0: the blocks lie as planned
};

struct OperationBuffers {
  const std::byte* input = nullptr;  // already offset to this batch
  std::byte* output = nullptr;
  Datatype type = Datatype::int32;
  ReduceOp op = Op::sum;
  std::shared_ptr<const void> keep_alive;  // memory `input` may point into
  BlockStride blocks;
};

class Operation final : public CollectiveTask, public std::enable_shared_from_this<Operation> {
 public:
  using Clock = std::chrono::steady_clock;

  // `plan`: the plan to run; when `binding` decides the plan at start
  // (arrival-ordered), a stand-in with the same peers-or-not answer.
  Operation(std::shared_ptr<const coll::RankPlan> plan, std::shared_ptr<Binding> binding, OperationContext context,
            OperationBuffers buffers, std::uint64_t signature, Clock::duration timeout,
            std::shared_ptr<const std::string> description);

  // False when the plan exchanges nothing with peers (count 0, or P = 1): such
  // an operation runs locally and consumes no sequence number.
  bool talks_to_peers() const override { return plan_->flags > 0 || !plan_->notes.empty(); }
  // Drive holder: begin executing with this sequence number (0: it
  // exchanges nothing, and the binding is never asked).
  void start(std::uint64_t sequence) override;
  Binding& binding() { return *binding_; }
  // Drive holder: look at awaited flags and the watchdog. True on progress.
  bool poll() override;
  // Every step done, or failed with no task still touching user buffers.
  bool finished() const override;
  std::exception_ptr error() const override;
  // Any thread: fail with `cause` (first failure wins).
  void fail(const std::string& cause) override;
  const std::string& description() const override { return *description_; }
  // The sequence number it runs under (0: it exchanges nothing).
  std::uint64_t sequence() const override { return sequence_; }
  void succeeded() override { binding_->finished(); }
  std::optional<std::uint64_t> silent_flag_value() const override {
    if (plan_->flags > 0) return std::nullopt;
    return flag_value(sequence_, signature_);
  }
  void add_writers(std::vector<int>& ranks) const override;

 private:
  void run_plan();
  // Drive holder, once every step is done: whether the transport's sends
  // completed (then finished()); true when that changed now.
  bool settle_sends();
  void run_decided_plan();
  bool poll_decision();
  void dispatch(std::uint32_t step);
  void dispatch_now(std::uint32_t step);
  void run_compute_task(std::uint32_t step);
  void execute(const coll::PlanStep& s, bool may_split);
  // One piece of step `s` whose ranges are contiguous in every buffer.
  void execute_piece(const coll::PlanStep& s, coll::Range src, coll::Range dst, coll::Range left, bool may_split);
  void finish_step(std::uint32_t step);
  // A put whose one notification goes to the put's own target, in one piece:
  // the transport sends both together (Transport::put_notify), and
  // finish_step has nothing left to notify.
  bool notifies_with_put(const coll::PlanStep& s) const;
  void satisfy(std::uint32_t step);
  void check_flag(std::size_t index, bool& progressed);
  void watch();
  // Reads the clock: false (and a new deadline) after progress, else
  // whether the deadline passed.
  std::string missing_flags() const;
  std::byte* local(coll::Buffer buffer, coll::Range range) const;
  // Element `planned` of `buffer` in the plan, as an element of the user's
  // buffer; and how many elements from it on stay contiguous there.
  std::size_t placed(coll::Buffer buffer, std::size_t planned) const;
  std::size_t contiguous_from(coll::Buffer buffer, std::size_t planned) const;
  std::size_t scratch_offset(coll::Range range) const;
  // Rank bound to a virtual rank; -1 while unknown.
  int real_rank(int virtual_rank) const { return binding_->rank_of(virtual_rank); }
  std::string name_of(int virtual_rank) const;
  bool known(int virtual_rank);
  // Lane guard: a step that writes peers' windows waits until they are free.
  enum class Phase : std::uint8_t { execute, notify };
  struct Parked {
    std::uint32_t step;
    Phase phase;
  };
  bool targets_ready(const coll::PlanStep& s, bool check_data_target);
  bool retry_parked();

  std::shared_ptr<const coll::RankPlan> plan_;
  std::shared_ptr<Binding> binding_;  // a static one is shared by every call of one shape
  OperationContext ctx_;
  bool refreshed_this_poll_ = false;
  OperationBuffers buf_;
  std::size_t elem_;
  std::uint64_t signature_;
  Watchdog watchdog_;  // drive holder only
  std::shared_ptr<const std::string> description_;  // shared by every call of one shape

  std::uint64_t sequence_ = 0;
  WindowLayout::Lane lane_;
  // Per step: unmet dependencies. Small plans (a latency-bound collective)
  // use the inline array; null until the plan runs.
  static constexpr std::size_t kInlineSteps = 8;
  std::atomic<std::uint32_t>* waits_ = nullptr;
  std::array<std::atomic<std::uint32_t>, kInlineSteps> inline_waits_;
  std::unique_ptr<std::atomic<std::uint32_t>[]> heap_waits_;
  std::vector<std::uint32_t> unseen_flags_;  // drive holder only
  std::vector<Parked> parked_;               // drive holder only
  std::atomic<std::size_t> remaining_{0};
  // Every step done and the transport's sends complete
  // (Transport::sends_pending): finished() waits for both. Drive holder.
  std::atomic<bool> sends_settled_{false};
  std::atomic<int> inflight_tasks_{0};
  FirstFailure failure_;
};

}  // namespace earlybird
