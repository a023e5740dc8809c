#include "comm_core.hpp"

#include "../config/algorithm_choice.hpp"
#include "../pap/arrival_policy.hpp"
#include "../pap/global_clock.hpp"
#include "../base/backoff.hpp"
#include "../topo/topology.hpp"

#include <earlybird/collectives/catalogue.hpp>
#include <earlybird/collectives/peers.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

namespace earlybird::detail {

WindowLayout layout_for(const CommOptions& options, int ranks) {
  WindowLayout layout;
  layout.ranks = ranks;
  layout.flags_per_lane = options.flags_per_lane;
  layout.scratch_bytes = (options.scratch_bytes + 63) / 64 * 64;
  return layout;
}

std::shared_ptr<FutureState> failed_future(const std::string& message) {
  auto state = std::make_shared<FutureState>();
  state->fail(std::make_exception_ptr(Error(message)));
  return state;
}

CommCore::CommCore(ProgressEngine& engine, std::unique_ptr<Transport> transport, CommOptions options)
    : engine_(&engine),
      transport_(std::move(transport)),
      options_(options),
      layout_(layout_for(options, transport_->size())),
      rank_(transport_->rank()),
      size_(transport_->size()),
      direct_windows_(InlineCollective::direct_windows(*transport_)),
      shape_context_(shape_context()),
      arrival_(*transport_, layout_, options.verbose),
      plans_(PlanCache::for_shape(size_, transport_->node_ranks(), layout_)),
      shared_shapes_(shared_shapes_for_this()),
      lanes_(*transport_, layout_) {}

CommCore::~CommCore() = default;

std::shared_ptr<CommCore> CommCore::create(ProgressEngine& engine, std::unique_ptr<Transport> transport,
                                           CommOptions options) {
  auto core = std::make_shared<CommCore>(engine, std::move(transport), options);
  core->fault_in_small_calls();
  core->driver_.on_post([weak = std::weak_ptr<CommCore>(core)] {
    if (auto self = weak.lock()) self->wake_engine();
  });
  if (core->transport_->needs_service()) {
    // Served from the start, and warmed up (connections across nodes are
    // made at first use) while the caller goes on. A round trip that timed
    // out does not break the communicator: its peer may only be slow to
    // start (a rank of an oversubscribed host still setting up a split), the
    // transport drops the late answer, and a peer that is gone is named by
    // the first collective's own watchdog.
    core->driver_.post([self = core.get()] {
      self->serving_ = true;
      try {
        self->round_trips();
      } catch (const std::exception& e) {
        if (self->options_.verbose)
          std::fprintf(stderr, "earlybird: rank %d: warm-up at creation: %s (the communicator stays usable)\n",
                       self->rank_, e.what());
      }
    });
    if (core->size_ > 1) core->first_call_at_creation();
  }
  return core;
}

void CommCore::first_call_at_creation() {
  double value = 0, sum = 0;
  CollectiveCall call;
  call.input = &value;
  call.output = &sum;
  call.count = 1;
  call.type = Datatype::float64;
  call.options.blocking = true;
  try {
    run(call).wait();
  } catch (const std::exception& e) {
    throw Error("earlybird: making a communicator of " + std::to_string(size_) + " ranks on rank " +
                std::to_string(rank_) + ": its first allreduce failed: " + e.what());
  }
}

// Small calls, the ones whose time a page fault would double, use the
// window's flags and lines, the small lanes' scratch and (arrival-ordered
// ones) the start of a large lane's; the rest is mapped as collectives first
// use it.
constexpr std::size_t kFaultedInScratchBytes = 64 * 1024;

void CommCore::fault_in_small_calls() {
  transport_->fault_in(0, layout_.zeroed_bytes());
  transport_->fault_in(layout_.scratch_offset(WindowLayout::kLanes), WindowLayout::kSmallLanes * layout_.small_scratch_bytes());
  for (int lane = 0; lane < WindowLayout::kLanes; ++lane)
    transport_->fault_in(layout_.scratch_offset(lane), std::min(layout_.scratch_bytes, kFaultedInScratchBytes));
}

void CommCore::wake_engine() {
  engine_->submit([self = shared_from_this()] { self->engine_->activate(self); });
}

Future CommCore::run(const CollectiveCall& call) {
  // Counted before validation so that ranks stay aligned even if one rank's
  // call is refused: estimates are matched to calls by this number.
  const std::uint64_t call_index = arrival_.count_call();
  if (fits_inline_lines(call))  // else it cannot have a hot shape: no need to take the drive
    if (auto done = run_inline_here(call, nullptr)) return std::move(*done);
  std::shared_ptr<const Prepared> p;
  if (auto problem = prepare_checked(call, p); !problem.empty()) return Future(failed_future(problem));
  return launch(call, p, call_index);
}

std::string CommCore::prepare_checked(const CollectiveCall& call, std::shared_ptr<const Prepared>& p) {
  try {
    p = prepared(call);
  } catch (const std::exception& e) {
    return describe(call, "", rank_, size_) + ": " + e.what();
  }
  return problem_of(call, *p);
}

std::string CommCore::problem_of(const CollectiveCall& call, const Prepared& p) const {
  auto invalid = [&](const std::string& why) { return p.description + ": " + why; };
  if (closed_) return invalid("the communicator is closed");
  if (!p.invalid.empty()) return invalid(p.invalid);
  if (const char* why = buffer_problem(call, rank_, size_)) return invalid(why);
  return {};
}

// An in-place reduce-scatter on the peer_reads executor: its peers read this
// rank's input while its result lands over the start of it, so it reads a
// copy instead (ReusedBuffers). Every other executor reads it in place: the
// schedules are verified for it (coll::input_in_output), the inline lines
// publish the input before anything is written.
bool CommCore::reads_input_copy(const CollectiveCall& call, const Prepared& p) {
  return p.executor == coll::Executor::peer_reads && call.collective == coll::Collective::reduce_scatter &&
         call.input == call.output && call.count > 0 && !call.owned_input;
}

Future CommCore::launch(const CollectiveCall& call, const std::shared_ptr<const Prepared>& p,
                        std::uint64_t call_index) {
  if (reads_input_copy(call, *p)) {
    CollectiveCall copied = call;
    copied.owned_input = private_copy(call.input, call.count * size_of(call.type) * static_cast<std::size_t>(size_));
    copied.input = copied.owned_input->data();
    return launch(copied, p, call_index);
  }
  // A caller-run call gets its Future only if it does not finish at once.
  const CallContext context{p->caller_run ? nullptr : std::make_shared<FutureState>(), call_index,
                            pap::arrival_ordered(*p->info) ? pap::global_now_us(*transport_) : 0};
  try {
    if (size_ == 1 && p->caller_run && run_alone(call)) return completed_future();
    if (p->caller_run && p->executor == coll::Executor::inline_lines)
      if (auto done = run_inline_here(call, &p)) return std::move(*done);
    if (p->caller_run) return run_here(batch(call, p, 0, context), caller_budget(call));
    std::vector<Pending> items;
    for (std::size_t b = 0; b < p->batch_keys.size(); ++b) items.push_back(batch(call, p, b, context));
    enqueue(std::move(items));
  } catch (const std::exception& e) {
    return Future(failed_future(p->description + ": " + e.what()));
  }
  return Future(context.future);
}

CommCore::Persistent CommCore::make_persistent(const CollectiveCall& call) {
  Persistent persistent{call, nullptr, {}};
  persistent.problem = prepare_checked(persistent.call, persistent.prepared);
  return persistent;
}

// Counted as a call, like run()'s, whether it runs or fails.
Future CommCore::start(const Persistent& persistent) {
  const std::uint64_t call_index = arrival_.count_call();
  if (!persistent.problem.empty()) return Future(failed_future(persistent.problem));
  if (closed_) return Future(failed_future(persistent.prepared->description + ": the communicator is closed"));
  return launch(persistent.call, persistent.prepared, call_index);
}

// A blocking call's caller waits at once and would only drive it again from
// the Future (FutureState::help_until): handing it over would wake the
// progress thread to compete with it for the CPU. So it drives until the
// call ends (its watchdog bounds that); other calls for options.caller_run.
std::chrono::microseconds CommCore::caller_budget(const CollectiveCall& call) const {
  return call.options.blocking ? kUntilDone : options_.caller_run;
}

// The caller takes the drive if it is free and nothing is queued before this
// collective, and drives it until it finishes or `budget` passes.
// Finished: the call returns a completed Future and allocated none. Not
// finished: the progress thread takes over, and whoever waits on the Future
// helps.
Future CommCore::run_here(Pending item, std::chrono::microseconds budget) {
  const std::shared_ptr<CollectiveTask> task = item.op;
  std::shared_ptr<FutureState> future;
  bool finished = false;
  {
    DriveHold hold(driver_, true);
    if (!hold) {
      future = hand_over(item);
      enqueue({std::move(item)});
      return Future(future);
    }
    if (idle_after_posted()) {
      queue_.push_back(std::move(item));
      start_next();
      drive_while([&] { return active_.op == task; }, budget);
      finished = active_.op != task;  // retired: finished or failed
      if (!finished) future = hand_over(active_);
    } else {
      future = hand_over(item);
      queue_.push_back(std::move(item));
    }
    if (!finished) busy_.store(true, std::memory_order_relaxed);
  }
  wake_engine_if_work_left();
  return finished ? outcome_of(*task) : Future(future);
}

std::shared_ptr<FutureState> CommCore::hand_over(Pending& pending) {
  pending.future = std::make_shared<FutureState>();
  pending.future->set_helper(weak_from_this());
  return pending.future;
}

bool CommCore::fits_inline_lines(const CollectiveCall& call, const ShapeContext& context) {
  return context.direct && context.ranks > 1 &&
         InlineCollective::published_elems(call.collective, context.ranks, call.count) <=
             InlineCollective::capacity_elems(size_of(call.type));
}

// The caller holds the drive only while it runs the call: the progress
// thread is woken after it let go (woken before, it finds the drive held and
// polls again, on a CPU the peers need: measured at P = 2, 8 B, about twelve
// times as many calls past the caller-run budget).
std::optional<Future> CommCore::run_inline_here(const CollectiveCall& call,
                                                const std::shared_ptr<const Prepared>* prepared) {
  std::optional<Future> result;
  {
    DriveHold hold(driver_, true);
    if (!hold || !idle_after_posted()) return std::nullopt;
    HotShape* hot = prepared ? &hot_holding(*prepared) : hot_matching(call);
    if (!hot || (!prepared && !problem_of(call, *hot->prepared).empty())) return std::nullopt;
    hot->last_use = ++hot_uses_;
    result = run_inline(call, *hot);
  }
  if (result) wake_engine_if_work_left();  // handed over: busy
  return result;
}

// A caller let go of the drive: work other threads queued meanwhile is the
// progress thread's, which sleeps without taking the CPU from a caller
// (ProgressEngine::set_yielding) and must be told.
void CommCore::wake_engine_if_work_left() {
  if (busy_.load(std::memory_order_relaxed) || driver_.has_posted()) wake_engine();
}

void CommCore::stop_helping() { wake_engine_if_work_left(); }

CommCore::HotShape* CommCore::hot_matching(const CollectiveCall& call) {
  for (HotShape& hot : hot_)
    if (hot.prepared && same_shape(hot.prepared->shape, call))
      return hot.pins_version == pins_version_.load(std::memory_order_acquire) ? &hot : nullptr;
  return nullptr;
}

CommCore::HotShape& CommCore::hot_holding(const std::shared_ptr<const Prepared>& prepared) {
  const std::uint64_t version = pins_version_.load(std::memory_order_acquire);
  HotShape* replaced = &hot_.front();
  for (HotShape& hot : hot_) {
    if (hot.prepared == prepared) {
      hot.pins_version = version;
      return hot;
    }
    if (hot.prepared && same_shape(hot.prepared->shape, prepared->shape)) {
      replaced = &hot;  // its shape, prepared again since (the shape cache let it go)
      break;
    }
    if (hot.last_use < replaced->last_use) replaced = &hot;
  }
  replaced->task.reset();  // it may describe itself with the old shape's text
  replaced->prepared = prepared;
  replaced->pins_version = version;
  return *replaced;
}

// Drive held, nothing active or queued, `hot` the call's shape. The task and
// its description are reached through pointers that own nothing: the entry
// outlives every use (it is replaced only when idle).
Future CommCore::run_inline(const CollectiveCall& call, HotShape& hot) {
  InlineCollective& task = inline_task_for(call, hot);
  if (run_inline_alone(task, hot.pending, caller_budget(call))) return outcome_of(task);
  active_ = hot.pending;
  const auto future = hand_over(active_);
  busy_.store(true, std::memory_order_relaxed);
  return Future(future);
}

InlineCollective& CommCore::inline_task_for(const CollectiveCall& call, HotShape& hot) {
  if (hot.task && hot.task->rearm(call.input, call.output, call.op, call.owned_input)) return *hot.task;
  const Prepared& p = *hot.prepared;
  const std::shared_ptr<const std::string> description(std::shared_ptr<void>(), &p.description);
  InlineCollective& task = hot.task.emplace(direct_windows_, rank_, lanes_, layout_, buffers_of(call, p, 0),
                                            InlineCollective::Call{call.collective, call.root, call.count},
                                            p.signature, p.timeout, description);
  hot.pending = pending_of(call, p, 0, std::shared_ptr<CollectiveTask>(std::shared_ptr<void>(), &task), nullptr);
  return task;
}

// Spins unless other ranks' threads may run on this rank's CPUs: the progress
// thread, which may share this rank's core, backs off meanwhile (urgent() is
// false). The clock is read once per kTurnsPerClockRead idle turns.
template <class Step, class More>
void CommCore::drive_loop(Step step, More more, std::chrono::microseconds budget) {
  constexpr int kTurnsPerClockRead = 16;
  Backoff backoff(topo::cores_shared_with_other_ranks());
  std::optional<std::chrono::steady_clock::time_point> until;
  for (int idle = 0; more();) {
    if (step()) {
      backoff.reset();
      continue;
    }
    if (budget != kUntilDone && ++idle % kTurnsPerClockRead == 0) {
      const auto now = std::chrono::steady_clock::now();
      if (!until) until = now + budget;
      if (now > *until) return;
    }
    backoff.pause();
  }
}

void CommCore::drive_while(const std::function<bool()>& more, std::chrono::microseconds budget) {
  drive_loop([this] { return drive(); }, more, budget);
}

// A communicator with a failed collective, or a call with a straggler
// threshold, takes the queue's path (start_active fails the call, drive()
// reports stragglers). Posted work runs meanwhile, as drive() runs it (a
// collective another thread submits queues behind this one).
bool CommCore::run_inline_alone(InlineCollective& task, const Pending& pending, std::chrono::microseconds budget) {
  if (!broken_.empty() || pending.straggler_after.count() > 0) {
    active_ = pending;
    start_active();
    drive_while([&] { return active_.op.get() == &task; }, budget);
    return active_.op.get() != &task;  // retired: finished or failed
  }
  begin(task, pending);
  drive_loop([&] { return task.poll() | driver_.run_posted(); }, [&] { return !task.finished(); }, budget);
  if (!task.finished()) return false;
  settle(task, pending);
  return true;
}

// A retired caller-run task's Future: the shared completed one, or its error.
Future CommCore::outcome_of(const CollectiveTask& task) {
  if (auto error = task.error()) {
    auto failed = std::make_shared<FutureState>();
    failed->fail(error);
    return Future(failed);
  }
  return completed_future();
}

Future CommCore::completed_future() { return Future(Future::CompletedTag{}); }

// With one rank every collective leaves the input in the output: allreduce,
// reduce (root 0), reduce_scatter and allgather (one block) copy it unless in
// place, bcast has nothing to do.
bool CommCore::run_alone(const CollectiveCall& call) {
  DriveHold hold(driver_, true);
  if (!hold || !idle_after_posted()) return false;  // keep the communicator's order
  if (call.input && call.output && call.input != call.output)
    std::memcpy(call.output, call.input, call.count * size_of(call.type));
  return true;
}

// The drive's holder only: runs what other threads posted, then says whether
// nothing is active or queued (a call may run now without overtaking one).
bool CommCore::idle_after_posted() {
  driver_.run_posted();
  return !active_.op && queue_.empty();
}

bool CommCore::help() {
  DriveHold hold(driver_, true);
  return hold && drive();
}

void CommCore::enqueue(std::vector<Pending> items) {
  driver_.post([self = this, items = std::move(items)]() mutable {
    for (auto& item : items) self->queue_.push_back(std::move(item));
    self->busy_.store(true, std::memory_order_relaxed);
  });
}

bool CommCore::poll(bool& still_active) {
  DriveHold hold(driver_, false);
  if (!hold) {
    still_active = true;  // a caller drives; look again later
    return false;
  }
  const bool progressed = drive();
  still_active = active_.op || head_startable() || serving_ || driver_.has_posted();
  return progressed;
}

bool CommCore::drive() {
  bool progressed = driver_.run_posted();
  progressed |= serving_ && transport_->poll_hook();
  if (active_.op) {
    progressed |= active_.op->poll();
    if (active_.op->finished()) {
      retire();
      progressed = true;
    } else {
      check_straggler();
    }
  }
  while (!active_.op && head_startable()) {
    start_next();
    progressed = true;
  }
  busy_.store(active_.op || head_startable(), std::memory_order_relaxed);
  // Waiting or idle: the message delays nothing. Not once close() began:
  // its transport may be closing on the caller's thread.
  if (!progressed && !closed_.load(std::memory_order_acquire)) lanes_.tell_untold();
  if (!active_.op && queue_.empty() && !drain_waiters_.empty()) {
    serving_ = false;  // close(): the caller's thread serves the transport from here on
    // Completing a waiter may let close() return and the owner drop its
    // reference: they complete once the drive is released, from a list taken
    // out here (the engine still holds this core).
    driver_.after_release([waiters = std::move(drain_waiters_)] {
      for (auto& waiter : waiters) waiter->complete();
    });
    drain_waiters_.clear();
  }
  return progressed;
}

void CommCore::start_next() {
  active_ = std::move(queue_.front());
  queue_.pop_front();
  start_active();
}

void CommCore::start_active() {
  const bool never_ready = active_.gates && !active_.gates->released[active_.part];  // so abandoned
  if (!broken_.empty() || never_ready) {
    active_.op->fail(broken_.empty() ? "not run: part " + std::to_string(active_.part) +
                                           " was never ready (the partitioned allreduce was dropped)"
                                     : "not run: an earlier collective on this communicator failed (" + broken_ + ")");
    retire();
    return;
  }
  begin(*active_.op, active_);
  if (active_.op->finished()) retire();
}

void CommCore::begin(CollectiveTask& op, const Pending& entry) {
  const bool talks = op.talks_to_peers();
  const std::uint64_t sequence = talks ? next_sequence_++ : 0;
  if (talks) arrival_.entered(sequence);
  // The clock for the straggler report, and for tau on one allreduce in
  // kTimedEvery (tau keeps the fastest per size: a sample does; a clock read
  // is a tenth of a small collective).
  constexpr std::uint64_t kTimedEvery = 8;
  active_timed_ =
      talks && ((entry.allreduce_bytes > 0 && sequence % kTimedEvery == 0) || entry.straggler_after.count() > 0);
  if (active_timed_) active_since_ = std::chrono::steady_clock::now();
  active_reported_ = false;
  op.start(sequence);
}

void CommCore::mark_broken(const std::string& why) {
  if (broken_.empty()) broken_ = why;
}

// A timed-out collective's error, with the ranks that have not called it
// (the cause, where the watchdog names only the peer this rank waits for
// directly). Unchanged when every rank called it or the probe fails.
std::exception_ptr CommCore::naming_absent_ranks(std::exception_ptr error, std::uint64_t sequence) {
  std::vector<int> absent;
  try {
    absent = arrival_.not_entered(sequence);
  } catch (const std::exception&) {
    return error;  // the probe failed as well: the watchdog's message stands
  }
  if (absent.empty()) return error;
  std::string ranks;
  for (int r : absent) ranks += (ranks.empty() ? "rank " : ", rank ") + std::to_string(r);
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return std::make_exception_ptr(Error(std::string(e.what()) + "; not called yet by " + ranks));
  } catch (...) {
    return error;
  }
}

void CommCore::retire() {
  settle(*active_.op, active_);
  active_ = Pending{};
}

// A task in which this rank received nothing compares its call with its
// peers' on direct windows (exec/silent_role.hpp). The word it stores is in
// the silent line of its sequence's inline lane, which a peer may still read
// for the sequence 8 before: where that is not known to be over (a root
// running far ahead of some peer; the inline lines have just checked) the
// check is left out for this call.
void CommCore::check_silent_role(CollectiveTask& op) {
  const std::optional<std::uint64_t> value = op.silent_flag_value();
  if (!value || !direct() || op.error()) return;
  const std::uint64_t sequence = op.sequence();
  if (!lanes_.all_free(rank_, sequence, WindowLayout::kInlineLanes)) return;
  const int lane = static_cast<int>(sequence % WindowLayout::kInlineLanes);
  const auto disagreement = silent_lines_.compare(direct_windows_, rank_, lane, layout_.inline_offset(lane), *value);
  if (!disagreement) return;
  std::string cause = different_collective("rank " + std::to_string(disagreement->peer));
  if (disagreement->sequence != sequence)
    cause += " in this communicator's collective " + std::to_string(disagreement->sequence) +
             ", which returned on this rank (found at this later one, " + std::to_string(sequence) + ")";
  op.fail(cause);
}

void CommCore::settle(CollectiveTask& op, const Pending& entry) {
  if (op.sequence() > 0) check_silent_role(op);
  if (auto error = op.error()) {
    if (op.timed_out() && op.sequence() > 0) error = naming_absent_ranks(error, op.sequence());
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      mark_broken(e.what());
    }
    if (entry.future)  // none: a caller-run call reads the task's error
      driver_.after_release([future = entry.future, error] { future->fail(error); });
  } else {
    if (op.sequence() > 0) {
      lanes_.finished(op.sequence(), entry.all_started, writers_to_tell(op, entry.all_started));
      op.succeeded();
      if (entry.allreduce_bytes > 0 && active_timed_) {
        const std::chrono::duration<double, std::micro> took = std::chrono::steady_clock::now() - active_since_;
        arrival_.allreduce_took(entry.allreduce_bytes, took.count());
      }
    }
    if (entry.last_of_call && entry.future) driver_.after_release([future = entry.future] { future->complete(); });
  }
}

std::span<const int> CommCore::writers_to_tell(const CollectiveTask& op, bool all_started) {
  writers_.clear();
  if (!all_started && lanes_.tells_writers()) op.add_writers(writers_);
  return writers_;
}

std::shared_ptr<CommCore> CommCore::split(int color, int key) {
  auto transport = transport_->split(color, key, layout_.window_size());
  if (!transport) return nullptr;
  return create(*engine_, std::move(transport), options_);
}

// A call waiting past its straggler threshold asks every rank (one remote
// read each, once per call) which collective it last entered.
void CommCore::check_straggler() {
  if (active_reported_ || active_.straggler_after.count() <= 0) return;
  const auto waited = std::chrono::steady_clock::now() - active_since_;
  if (waited < active_.straggler_after) return;
  if (active_.op->sequence() == 0) return;
  active_reported_ = true;
  try {
    arrival_.report_stragglers(active_.op->sequence(), active_.op->description(),
                               std::chrono::duration_cast<std::chrono::milliseconds>(waited));
  } catch (const std::exception& e) {
    active_.op->fail(std::string("straggler check failed: ") + e.what());
  }
}

// The estimate is for this rank's next collective call on the communicator
// (of any kind: an estimate made in a phase that ends in a ring allreduce
// must not be taken for the next arrival-ordered call's); the progress
// thread publishes it on rank 0's board, then warms up the connections the
// last arrival-ordered collective used and those to coll::common_peers (one
// message each, no answer awaited).
void CommCore::edge(double fraction) {
  const std::int64_t estimate_us = arrival_.estimate(fraction);
  if (closed_)
    throw Error("earlybird edge(" + std::to_string(fraction) + ") on rank " + std::to_string(rank_) +
                ": the communicator is closed");
  const std::uint64_t call = arrival_.next_call();
  driver_.post([self = shared_from_this(), call, estimate_us] {
    try {
      self->arrival_.publish_estimate(call, estimate_us);
      self->arrival_.warm_up();
    } catch (const std::exception& e) {
      self->mark_broken(std::string("edge() failed: ") + e.what());
    }
  });
}

Future CommCore::warm_up() {
  const std::string what = "earlybird warm_up on rank " + std::to_string(rank_) + " of " + std::to_string(size_);
  if (closed_) return Future(failed_future(what + ": the communicator is closed"));
  auto future = std::make_shared<FutureState>();
  driver_.post([self = shared_from_this(), future, what] {
    try {
      self->round_trips();
    } catch (const std::exception& e) {
      auto error = std::make_exception_ptr(Error(what + ": " + e.what()));
      return self->driver_.after_release([future, error] { future->fail(error); });
    }
    // Milliseconds of the model's work (seconds at P = 64): not the
    // progress thread's, nor TBB's (its workers spin after it, on the CPU
    // the caller's first collective needs).
    self->engine_->run_on_own_thread([self, future, what] {
      try {
        self->decide_ahead();
        future->complete();
      } catch (const std::exception& e) {
        future->fail(std::make_exception_ptr(Error(what + ": " + e.what())));
      }
    });
  });
  return Future(future);
}

void CommCore::decide_ahead() const {
  if (size_ > 1) config::decide_ahead(size_, direct(), transport_->node_ranks(), shared_cores(), reads_peers());
}

void CommCore::round_trips() {
  for (int peer : coll::common_peers(rank_, size_)) {
    try {
      transport_->load_remote(peer, WindowLayout::kWarmUpWordOffset);
    } catch (const std::exception& e) {
      throw Error("round trip to rank " + std::to_string(peer) + ": " + e.what());
    }
  }
}

void CommCore::close() {
  if (closed_.exchange(true)) return;
  // Collectives already submitted still run; wait for the queue to drain.
  auto drained = std::make_shared<FutureState>();
  driver_.post([self = this, drained] { self->drain_waiters_.push_back(drained); });
  drained->wait();
  transport_->close();
}

}  // namespace earlybird::detail
