// CommCore: the state behind a Communicator handle — the queue, the plans
// (plan_cache.hpp) and the batches. User threads submit collectives (validated, planned and cut
// into batches on the caller's thread); they run one after another, in
// submission order, so every rank runs them in the same order. The thread
// holding the drive (exec/driver.hpp) runs them: the progress thread, or,
// for a small collective submitted to an idle communicator, the caller
// itself (caller-run), which hands over to the progress thread what does not
// finish within options.caller_run; a thread waiting for a caller-run
// collective's Future drives while it waits. Arrival-pattern state (monitoring, arrival-ordered bindings,
// straggler reports) is the ArrivalSession's (pap/arrival_session.hpp).
#pragma once

#include "../base/reused_buffers.hpp"
#include "../config/environment.hpp"
#include "../exec/driver.hpp"
#include "../exec/inline_collective.hpp"
#include "../exec/lane_guard.hpp"
#include "../exec/operation.hpp"
#include "../exec/peer_reads.hpp"
#include "../exec/silent_role.hpp"
#include "../pap/arrival_session.hpp"
#include "../progress/progress_engine.hpp"
#include "../rma/transport.hpp"
#include "../rma/window_layout.hpp"
#include "collective_call.hpp"
#include "plan_cache.hpp"

#include <earlybird/collectives/plan.hpp>
#include <earlybird/communicator.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <compare>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace earlybird::detail {

using config::CommOptions;

// The window of a communicator of `ranks` ranks.
WindowLayout layout_for(const CommOptions& options, int ranks);

class CommCore : public Pollable, public Drivable, public std::enable_shared_from_this<CommCore> {
 public:
  // `engine` must outlive the core (Runtime and SimWorld own both). Use
  // create(): a transport that needs service is polled from the start.
  CommCore(ProgressEngine& engine, std::unique_ptr<Transport> transport, CommOptions options);
  static std::shared_ptr<CommCore> create(ProgressEngine& engine, std::unique_ptr<Transport> transport,
                                          CommOptions options);
  ~CommCore() override;

  int rank() const { return rank_; }
  int size() const { return size_; }
  // Every rank's window is directly reachable (the model's node level).
  bool direct() const { return !direct_windows_.empty(); }
  // On a direct communicator: the cores its ranks share when they outnumber
  // the node's (config::shared_cores), and whether every rank reads the
  // others' memory (Transport::reads_peer_memory). The model's level with
  // direct() and the transport's node_ranks.
  int shared_cores() const;
  bool reads_peers() const { return direct() && transport_->reads_peer_memory(); }
  const CommOptions& options() const { return options_; }

  // An `auto` call of a class Communicator::tune pinned runs the pinned
  // choice (prepared with it, pin_for()); every other call as made.
  Future run(const CollectiveCall& call);
  // A copy of an in-place call's input where the executor cannot read it in
  // place (reads_input_copy), in memory this communicator reuses
  // (ReusedBuffers).
  std::shared_ptr<const std::vector<std::byte>> private_copy(const void* from, std::size_t bytes) {
    return reused_buffers_->copy_of(from, bytes);
  }

  // What every call of one shape (same_shape) shares, worked out once: the
  // algorithm, validity, description, signature, batches and their plans.
  struct Prepared;
  // A persistent collective (Communicator::allreduce_init ...): `call`'s
  // shape prepared and its buffers checked once. problem: the whole error
  // message every start fails with; empty when the call is valid.
  struct Persistent {
    CollectiveCall call;
    std::shared_ptr<const Prepared> prepared;
    std::string problem;
  };
  Persistent make_persistent(const CollectiveCall& call);
  // One start of `persistent`: a call like run()'s, without its checks.
  Future start(const Persistent& persistent);

  // Which parts of a partitioned allreduce may start: written and read by
  // the drive holder only (release_part and abandon_parts post to it).
  struct PartGates {
    std::vector<char> released;
    std::vector<char> caller_runs;  // per part: the readying thread may drive it (caller-run rules)
    bool abandoned = false;  // the handle went before every part was ready
  };
  // Communicator::allreduce_partitioned: each part an allreduce call of its
  // own, all queued now in part order, part k held until release_part(k).
  // The Future completes with the last part.
  Future run_partitioned(const std::vector<CollectiveCall>& parts, const std::shared_ptr<PartGates>& gates);
  // Part `part` may start. The calling thread drives this call's parts for
  // up to options.caller_run (idle) when the part is small enough to be
  // caller-run and the drive is free; otherwise the progress thread does.
  void release_part(const std::shared_ptr<PartGates>& gates, std::size_t part);
  // The parts not released yet fail instead of running.
  void abandon_parts(const std::shared_ptr<PartGates>& gates);
  std::shared_ptr<CommCore> split(int color, int key);
  // Waits for every submitted collective, then releases the window. Collective
  // (frees MPI objects); idempotent.
  void close();

  bool poll(bool& still_active) override;
  // Not while a caller drives: the progress thread then only backs off.
  // A waiting thread's turn at the drive; false when another thread holds it
  // or nothing moved.
  bool help() override;
  // A waiting thread stops helping: the progress thread drives what is left.
  void stop_helping() override;
  bool urgent() const override {
    return (busy_.load(std::memory_order_relaxed) || driver_.has_posted()) && !driver_.held_by_caller();
  }
  bool idle() const override { return !busy_.load(std::memory_order_relaxed) && !driver_.has_posted(); }
  bool waits_for_messages() const override { return transport_->waits_for_messages(); }

  // Communicator::tune's side. The class `call` belongs to on this
  // communicator, the model's ranking for it (config::ranked_algorithms),
  // and a pin: from now on an `auto` call of `size_class` runs `choice`.
  config::SizeClass size_class_of(const CollectiveCall& call) const;
  std::vector<coll::Prediction> ranking_for(const CollectiveCall& call) const;
  void pin(const config::SizeClass& size_class, config::Choice choice, TuneReport report);
  std::vector<TuneReport> tune_reports() const;
  // EARLYBIRD_TUNE: true the first time it is asked for `size_class` (the
  // caller then tunes it), false ever after.
  bool claim_tuning(const config::SizeClass& size_class);
  // The progress thread (an on_complete callback), which must not wait for
  // collectives of its own.
  bool on_progress_thread() const;

  // Communicator::phase_begin, edge, phase_end, straggler_report, last_decision.
  pap::ArrivalSession& arrival() { return arrival_; }
  void edge(double fraction);
  // Communicator::warm_up: round_trips() by the drive holder, in submission
  // order with this communicator's other requests; fails with the cause
  // (naming the rank) or at once on a closed communicator.
  Future warm_up();

 private:
  struct Pending {
    std::shared_ptr<CollectiveTask> op;
    std::shared_ptr<FutureState> future;  // null for a caller-run call while its caller drives it
    bool last_of_call = true;
    bool all_started = false;  // completing it implies every rank started it
    std::chrono::milliseconds straggler_after{0};  // 0: no straggler report
    std::size_t allreduce_bytes = 0;  // an allreduce's bytes (its time feeds tau); 0 otherwise
    std::shared_ptr<PartGates> gates;  // a partitioned allreduce's part: held until released
    std::size_t part = 0;
    bool startable() const { return !gates || gates->released[part] || gates->abandoned; }
  };
  // The pin of `call`'s class when it leaves the choice to `auto` and the
  // class has one; std::nullopt otherwise (at once, without the lock, on an
  // untuned communicator).
  std::optional<config::Choice> pin_for(const CollectiveCall& call) const;
  // The queue's head may start now (none: false).
  bool head_startable() const { return !queue_.empty() && queue_.front().startable(); }
  // The first problem of `call` (closed communicator, invalid shape, bad
  // buffers) as the error message its Future carries; empty if none.
  std::string problem_of(const CollectiveCall& call, const Prepared& p) const;
  // Prepares `call` into `p` and returns its first problem (problem_of's, or
  // what preparing it threw); empty if none.
  std::string prepare_checked(const CollectiveCall& call, std::shared_ptr<const Prepared>& p);
  // Runs a valid call: its batches queued, or run on the caller.
  Future launch(const CollectiveCall& call, const std::shared_ptr<const Prepared>& p, std::uint64_t call_index);
  static bool reads_input_copy(const CollectiveCall& call, const Prepared& p);

 public:
  struct Prepared {
    CollectiveCall shape;  // the call it was prepared for, buffers cleared
    std::string algorithm;
    std::size_t segment_bytes = 0;  // the segment its plans use (choose_algorithm); 0: the algorithm's default
    const coll::Algorithm* info = nullptr;
    std::string description;
    std::string invalid;  // why every call of this shape fails; empty: valid
    std::uint64_t signature = 0;
    std::size_t per_batch = 0;
    std::vector<PlanCache::Key> batch_keys;
    std::vector<std::shared_ptr<const coll::RankPlan>> batch_plans;
    std::chrono::milliseconds timeout{0};
    std::chrono::milliseconds straggler_after{0};
    bool caller_run = false;
    // What runs its batches: the plan's steps (Operation), the inline lines
    // (exec/inline_collective.hpp) or reads of the peers' buffers
    // (exec/peer_reads.hpp); the latter two only where the algorithm asks
    // for them and this communicator can.
    coll::Executor executor = coll::Executor::steps;
    std::shared_ptr<Binding> static_binding;  // null for arrival-ordered algorithms
    // auto_pap: what it runs where arrival order buys nothing
    // (config::fastest_schedule); the ring otherwise.
    std::string_view balanced = "ring";
  };
  // Everything preparing a shape depends on beyond the call: prepare() and
  // its helpers are static and read only this (and the plan cache, itself
  // one per ranks, node_ranks and window), so communicators with equal
  // contexts prepare every call alike and may share what they prepared
  // (SharedShapes). A new input to preparing is a new field here.
  struct ShapeContext {
    int ranks = 0, rank = 0, node_ranks = 0, shared_cores = 0;
    bool direct = false, reads_peers = false;
    std::size_t flags_per_lane = 0, scratch_bytes = 0;
    std::int64_t timeout_ms = 0, straggler_after_ms = 0, caller_run_us = 0;
    bool verbose = false;
    auto operator<=>(const ShapeContext&) const = default;
  };

 private:
  ShapeContext shape_context() const;
  std::int64_t caller_run_us() const;
  std::shared_ptr<const Prepared> prepared(const CollectiveCall& call);
  // `pin`: the class's pinned choice, which replaces the model's for an
  // `auto` call (CollectiveCall::options.segment_bytes still wins).
  static std::shared_ptr<const Prepared> prepare(const CollectiveCall& call, const ShapeContext& context,
                                                 PlanCache& plans, const std::optional<config::Choice>& pin = {});
  struct SharedShapes;
  std::shared_ptr<SharedShapes> shared_shapes_for_this() const;
  static void plan_batches(Prepared& p, const ShapeContext& context, PlanCache& plans);
  std::shared_ptr<Binding> binding_for(const Prepared& p, const PlanCache::Key& key, std::uint64_t call,
                                       std::int64_t arrival_us);
  // What one call's batches share.
  struct CallContext {
    std::shared_ptr<FutureState> future;
    std::uint64_t call = 0;       // the call's index (arrival estimates)
    std::int64_t arrival_us = 0;  // when it was made (arrival-ordered calls)
  };
  Pending batch(const CollectiveCall& call, const std::shared_ptr<const Prepared>& prepared, std::size_t b,
                const CallContext& context);
  static OperationBuffers buffers_of(const CollectiveCall& call, const Prepared& p, std::size_t b);
  static Pending pending_of(const CollectiveCall& call, const Prepared& p, std::size_t b,
                            std::shared_ptr<CollectiveTask> task, std::shared_ptr<FutureState> future);
  void enqueue(std::vector<Pending> items);
  // Caller-run: small, statically bound, one batch (any transport: the p2p
  // transport locks its state per transport, rma/p2p_transport.hpp).
  static bool caller_may_run(const Prepared& p, const ShapeContext& context);
  Future run_here(Pending item, std::chrono::microseconds budget);
  // The inline fast path (docs/design.md, "Execution"): a caller-run call on
  // the inline lines, run in its hot shape's task with no allocation and no
  // queue entry, when the drive is free and nothing is queued; none
  // otherwise. `prepared`: the call's prepared shape, which becomes hot (in
  // place of the least recently used); null: a hot shape the call has, if
  // any (found without the shape cache's lock).
  std::optional<Future> run_inline_here(const CollectiveCall& call, const std::shared_ptr<const Prepared>* prepared);
  // Every rank's window reachable directly and the vector this rank
  // publishes within the inline lines.
  static bool fits_inline_lines(const CollectiveCall& call, const ShapeContext& context);
  bool fits_inline_lines(const CollectiveCall& call) const { return fits_inline_lines(call, shape_context_); }
  // The inline fast path's recent shapes, each with its task (the task is
  // active_'s op while it runs, through a pointer that owns nothing; an entry
  // is replaced only when idle). Several, so that calls alternating between
  // shapes (a solver's sums of one value and of two, an allreduce and a
  // bcast) each keep their task instead of building it again.
  struct HotShape {
    std::shared_ptr<const Prepared> prepared;
    std::optional<InlineCollective> task;
    Pending pending;            // the task's queue entry, should the caller hand it over
    std::uint64_t last_use = 0;  // hot_uses_ when it last ran
    std::uint64_t pins_version = 0;  // pins_version_ when it was given `prepared`
  };
  static constexpr std::size_t kHotShapes = 4;
  // The hot entry whose shape the call has, prepared since the latest pin;
  // null if none.
  HotShape* hot_matching(const CollectiveCall& call);
  // The hot entry holding `prepared`, else the least recently used one,
  // emptied and given it.
  HotShape& hot_holding(const std::shared_ptr<const Prepared>& prepared);
  // Drive holder, idle, `hot` the call's shape.
  Future run_inline(const CollectiveCall& call, HotShape& hot);
  // `hot`'s task for the call: the last one re-armed with the call's buffers,
  // or a new one (a new shape, or the last one failed), with hot.pending its
  // queue entry.
  InlineCollective& inline_task_for(const CollectiveCall& call, HotShape& hot);
  // Drive holder, idle: runs the inline task outside the queue (started,
  // polled and settled here, active_ left empty) until it finishes or
  // `budget` passes; true when it finished. The queue's machinery cost over
  // a quarter of an 8-byte allreduce at P = 2 (docs/benchmarks.md).
  bool run_inline_alone(InlineCollective& task, const Pending& pending, std::chrono::microseconds budget);
  // Drive holder: a caller-run task the caller gives up on gets a Future, and
  // the progress thread takes over.
  std::shared_ptr<FutureState> hand_over(Pending& pending);
  // One rank, idle communicator: the call is a local copy (or nothing), done
  // here without a task, plan or sequence number. False when busy.
  bool run_alone(const CollectiveCall& call);
  bool idle_after_posted();
  // Drive holder: one turn (posted work, the active operation, the queue);
  // true on progress.
  bool drive();
  // Drive holder: drives while `more()` or until `budget` has passed since
  // it first found nothing to do (kUntilDone: while `more()`).
  static constexpr std::chrono::microseconds kUntilDone = std::chrono::microseconds::max();
  void drive_while(const std::function<bool()>& more, std::chrono::microseconds budget);
  // drive_while's loop: `step()` (true on progress) while `more()`.
  template <class Step, class More>
  void drive_loop(Step step, More more, std::chrono::microseconds budget);
  std::chrono::microseconds caller_budget(const CollectiveCall& call) const;
  static Future outcome_of(const CollectiveTask& task);
  static Future completed_future();
  // Maps in the window pages small calls use (Transport::fault_in).
  void fault_in_small_calls();
  // A communicator spanning nodes: one allreduce of a double, run and waited
  // for at creation (which every rank makes collectively), so that the
  // user's first call is not the first pass of the communicator's operation,
  // transport requests and window. Throws its error.
  void first_call_at_creation();
  // Asks the progress thread to poll this communicator.
  void wake_engine();
  // The same, if work is active, queued or posted (after a caller let go).
  void wake_engine_if_work_left();
  void start_next();
  void start_active();
  // Gives `op` its sequence number (0: it exchanges nothing), notes it as
  // entered and timed, and starts it.
  void begin(CollectiveTask& op, const Pending& entry);
  void retire();
  // A finished task's outcome: a failure breaks the communicator, a success
  // frees its lanes and feeds tau; `entry.future` (if any) completes.
  void settle(CollectiveTask& op, const Pending& entry);
  // settle's first step: a task in which this rank received nothing fails
  // if a peer's word shows it called a different collective.
  void check_silent_role(CollectiveTask& op);
  // The ranks the lane guard tells that `op` finished (none unless it tells).
  std::span<const int> writers_to_tell(const CollectiveTask& op, bool all_started);
  std::exception_ptr naming_absent_ranks(std::exception_ptr error, std::uint64_t sequence);
  void check_straggler();
  void mark_broken(const std::string& why);
  // Progress thread: one round trip (a read of the warm-up word) to every peer
  // of coll::common_peers, one after another. Throws the transport's error
  // prefixed with the peer.
  void round_trips();
  // Communicator::warm_up's second half: config::decide_ahead for this
  // communicator's level.
  void decide_ahead() const;

  ProgressEngine* engine_;
  std::unique_ptr<Transport> transport_;
  CommOptions options_;
  WindowLayout layout_;
  int rank_;
  int size_;
  std::vector<std::byte*> direct_windows_;  // every rank's window, when all are directly reachable
  ShapeContext shape_context_;
  std::atomic<bool> closed_{false};
  pap::ArrivalSession arrival_;

  std::shared_ptr<PlanCache> plans_;  // shared with plans built in the background
  std::shared_ptr<ReusedBuffers> reused_buffers_ = std::make_shared<ReusedBuffers>();  // private_copy
  std::mutex prepared_mutex_;
  std::deque<std::shared_ptr<const Prepared>> prepared_;  // most recently used first
  // The shapes prepared by every live communicator that would prepare them
  // alike (same P, rank, level, window and options): a split or dup finds
  // its parent's (comm_core_shapes.cpp).
  std::shared_ptr<SharedShapes> shared_shapes_;
  // Communicator::tune's pins; has_pins_ spares untuned calls the lock.
  // pins_version_ counts the pins made: a pin empties prepared_, and a hot
  // shape older than the latest pin is not run (HotShape::pins_version).
  std::atomic<bool> has_pins_{false};
  std::atomic<std::uint64_t> pins_version_{0};
  // EARLYBIRD_TUNE: one bit per class tuned or being tuned (claim_tuning),
  // read without a lock on every `auto` call.
  static constexpr std::size_t kClassBits = coll::kCollectives.size() * 64 * 8;
  std::array<std::atomic<std::uint64_t>, kClassBits / 64> tuning_claimed_{};
  std::vector<TuneReport> tune_reports_;        // of every pin, in order (pins_mutex_)
  mutable std::mutex pins_mutex_;
  std::map<config::SizeClass, config::Choice> pins_;
  Driver driver_;
  std::atomic<bool> busy_{false};  // an operation is active or queued (written by the drive holder)

  // Drive holder only.
  std::deque<Pending> queue_;
  Pending active_;
  std::uint64_t next_sequence_ = 1;
  LaneGuard lanes_;
  SilentLines silent_lines_;  // check_silent_role's
  std::vector<int> writers_;  // writers_to_tell's, reused
  std::chrono::steady_clock::time_point active_since_;  // when active_timed_
  bool active_timed_ = false;
  bool active_reported_ = false;
  bool serving_ = false;  // polling a transport that needs service, until close()
  std::string broken_;
  std::vector<std::shared_ptr<FutureState>> drain_waiters_;
  // The inline fast path's hot shapes, and its calls counted (HotShape::
  // last_use) to find the least recently used.
  std::array<HotShape, kHotShapes> hot_;
  std::uint64_t hot_uses_ = 0;
};

std::shared_ptr<FutureState> failed_future(const std::string& message);

// EARLYBIRD_TUNE (api/tune.cpp): before `call`, the first `auto` call of
// its class on `core`, the class is tuned (Communicator::tune); not on the
// progress thread, not inside a tune, not for shared_buffers calls. Returns
// tune's error ("" when none or not tuned): the call then fails with it.
std::string tune_on_first_use(const std::shared_ptr<CommCore>& core, const CollectiveCall& call);
// Wraps a core in the shared handle Communicator holds: dropping the last copy
// closes the communicator.
std::shared_ptr<CommCore> user_handle(std::shared_ptr<CommCore> core);
// Communicator::allreduce_init ...: `call` prepared on `core` (the user
// handle, which the persistent collective keeps open); null core: every start
// fails.
PersistentCollective make_persistent(const std::shared_ptr<CommCore>& core, const CollectiveCall& call);
// Communicator::allreduce_partitioned: `whole` cut into `part_counts`.
PartitionedCollective make_partitioned(const std::shared_ptr<CommCore>& core, const CollectiveCall& whole,
                                       std::vector<std::size_t> part_counts);

}  // namespace earlybird::detail
