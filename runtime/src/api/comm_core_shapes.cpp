// CommCore, what a call's shape decides (comm_core.hpp, "prepared shape"):
// the cache of prepared shapes, their validation, algorithm, plans and
// batches, whether they may run on the caller, and the task of each batch.
#include "comm_core.hpp"

#include "../base/shared_while_alive.hpp"
#include "../config/algorithm_choice.hpp"
#include "../pap/arrival_policy.hpp"
#include "../topo/topology.hpp"

#include <earlybird/collectives/catalogue.hpp>

#include <algorithm>
#include <bit>
#include <compare>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>

namespace earlybird::detail {

namespace {

std::shared_ptr<const coll::RankPlan> fitting_plan(PlanCache& plans, const PlanCache::Key& key) {
  auto plan = plans.plan(key);
  if (!plans.fits(*plan, key.elem_bytes))
    throw Error(key.algorithm + " with these pre-steps needs more scratch than the batch was sized for");
  return plan;
}

}  // namespace

// Rooted and plain collectives bind statically; arrival-ordered ones learn
// their plan and binding from the arrival session when they start. A plan
// not in the cache yet is built in the background: the progress thread asks
// for it and must not spend seconds building it (exec/pending_plan.hpp).
std::shared_ptr<Binding> CommCore::binding_for(const Prepared& p, const PlanCache::Key& key, std::uint64_t call,
                                               std::int64_t arrival_us) {
  if (p.static_binding) return p.static_binding;
  auto plan_of = [this, key](const coll::Algorithm& decided, int virtual_rank,
                             const std::vector<std::uint32_t>& presteps) {
    PlanCache::Key chosen = key;
    chosen.algorithm = std::string(decided.name);
    chosen.virtual_rank = virtual_rank;
    chosen.presteps = presteps;
    auto pending = std::make_shared<PendingPlan>();
    auto build = [plans = plans_, chosen, pending] {
      try {
        pending->set(fitting_plan(*plans, chosen));
      } catch (...) {
        pending->set_error(std::current_exception());
      }
    };
    if (plans_->has(chosen))
      build();
    else
      engine_->run_in_background(build);
    return pending;
  };
  return arrival_.binding(*p.info, call, arrival_us, key.count * key.elem_bytes, p.balanced, plan_of);
}

// How many shapes a communicator remembers, least recently used first out.
// A solver uses a handful; a benchmark cycling through every catalogue entry
// ~22. Calls cycling through more shapes than this miss every time (measured
// at P = 2, 8 B: 0.37 us per call with 17 shapes, 1.28 us with 70; a miss
// re-validates and re-plans the call's shape).
constexpr std::size_t kPreparedShapes = 64;

// Found on a communicator's miss, before it prepares the shape itself.
struct CommCore::SharedShapes {
  std::mutex mutex;
  std::deque<std::shared_ptr<const Prepared>> shapes;  // most recently added first

  std::shared_ptr<const Prepared> find(const CollectiveCall& call) {
    std::lock_guard lock(mutex);
    for (const auto& p : shapes)
      if (same_shape(p->shape, call)) return p;
    return nullptr;
  }
  void add(std::shared_ptr<const Prepared> p) {
    std::lock_guard lock(mutex);
    shapes.push_front(std::move(p));
    if (shapes.size() > kPreparedShapes) shapes.pop_back();
  }
};

CommCore::ShapeContext CommCore::shape_context() const {
  return ShapeContext{size_,
                      rank_,
                      transport_->node_ranks(),
                      shared_cores(),
                      direct(),
                      reads_peers(),
                      layout_.flags_per_lane,
                      layout_.scratch_bytes,
                      options_.timeout.count(),
                      options_.straggler_after.count(),
                      caller_run_us(),
                      options_.verbose};
}

// A rank that shares its cores with other ranks and waits for messages
// from other machines leaves every call to the progress thread: there a
// caller-run call measured several times slower (2 x 2 emulated hosts, one
// CPU each: a blocking 8-byte allreduce 2.6-3.0 ms against 0.4-0.5 ms;
// docs/benchmarks.md, "Ranks sharing cores across hosts: no caller-run").
std::int64_t CommCore::caller_run_us() const {
  if (transport_->waits_for_messages() && topo::cores_shared_with_other_ranks()) return 0;
  return options_.caller_run.count();
}

std::shared_ptr<CommCore::SharedShapes> CommCore::shared_shapes_for_this() const {
  return shared_while_alive<SharedShapes>(shape_context_, [] { return std::make_shared<SharedShapes>(); });
}

std::shared_ptr<const CommCore::Prepared> CommCore::prepared(const CollectiveCall& call) {
  {
    std::lock_guard lock(prepared_mutex_);
    for (auto it = prepared_.begin(); it != prepared_.end(); ++it) {
      if (!same_shape((*it)->shape, call)) continue;
      auto found = *it;
      if (it != prepared_.begin()) {
        prepared_.erase(it);
        prepared_.push_front(found);
      }
      return found;
    }
  }
  // A pinned choice is this communicator's: neither taken from the shapes
  // other communicators share nor given to them.
  const std::uint64_t version = pins_version_.load(std::memory_order_acquire);
  const std::optional<config::Choice> pin = pin_for(call);
  std::shared_ptr<const Prepared> made = pin ? nullptr : shared_shapes_->find(call);
  if (!made) {
    made = prepare(call, shape_context_, *plans_, pin);  // outside the locks: planning may take long
    if (!pin) shared_shapes_->add(made);
  }
  std::lock_guard lock(prepared_mutex_);
  if (version != pins_version_.load(std::memory_order_acquire)) return made;  // a pin came meanwhile: not kept
  prepared_.push_front(made);
  if (prepared_.size() > kPreparedShapes) prepared_.pop_back();
  return made;
}

// ---- pins (Communicator::tune) --------------------------------------------

namespace {

bool commutative_call(const CollectiveCall& call) { return !call.reduces() || call.op.commutative(); }

}  // namespace

config::SizeClass CommCore::size_class_of(const CollectiveCall& call) const {
  return config::size_class(call.collective, call.count * size_of(call.type), size_, commutative_call(call),
                            direct(), call.options.shared_buffers);
}

std::vector<coll::Prediction> CommCore::ranking_for(const CollectiveCall& call) const {
  const ShapeContext& c = shape_context_;
  return config::ranked_algorithms(call.collective, call.count * size_of(call.type), c.ranks, commutative_call(call),
                                   c.direct, c.node_ranks, c.shared_cores, c.reads_peers, call.options.shared_buffers);
}

// Prepared shapes chose before the pin: the communicator's own are dropped,
// its hot ones no longer match (hot_matching).
void CommCore::pin(const config::SizeClass& size_class, config::Choice choice, TuneReport report) {
  {
    std::lock_guard lock(pins_mutex_);
    pins_[size_class] = std::move(choice);
    tune_reports_.push_back(std::move(report));
    has_pins_.store(true, std::memory_order_release);
  }
  std::lock_guard lock(prepared_mutex_);
  pins_version_.fetch_add(1, std::memory_order_acq_rel);
  prepared_.clear();
}

std::vector<TuneReport> CommCore::tune_reports() const {
  std::lock_guard lock(pins_mutex_);
  return tune_reports_;
}

// The class's bit: collective, log2 of its power-of-two bytes, and its
// three flags.
bool CommCore::claim_tuning(const config::SizeClass& size_class) {
  const std::size_t log2_bytes = std::min<std::size_t>(63, std::bit_width(size_class.bytes) - 1);
  const std::size_t bit = ((static_cast<std::size_t>(size_class.collective) * 64 + log2_bytes) * 2 +
                           size_class.commutative) * 4 + size_class.fits_inline * 2 + size_class.peers_mapped;
  std::atomic<std::uint64_t>& word = tuning_claimed_[bit / 64];
  const std::uint64_t mask = std::uint64_t{1} << (bit % 64);
  if (word.load(std::memory_order_relaxed) & mask) return false;  // the common case: no read-modify-write
  return !(word.fetch_or(mask, std::memory_order_relaxed) & mask);
}

bool CommCore::on_progress_thread() const { return engine_->on_progress_thread(); }

std::optional<config::Choice> CommCore::pin_for(const CollectiveCall& call) const {
  if (!has_pins_.load(std::memory_order_acquire) || !leaves_choice_to_auto(call) || call.count == 0) return std::nullopt;
  const config::SizeClass size_class = size_class_of(call);
  std::lock_guard lock(pins_mutex_);
  const auto found = pins_.find(size_class);
  if (found == pins_.end()) return std::nullopt;
  return found->second;
}

int CommCore::shared_cores() const { return direct() ? config::shared_cores(size_, topo::core_count()) : 0; }

std::shared_ptr<const CommCore::Prepared> CommCore::prepare(const CollectiveCall& call, const ShapeContext& context,
                                                           PlanCache& plans, const std::optional<config::Choice>& pin) {
  auto p = std::make_shared<Prepared>();
  p->shape = call;
  p->shape.input = nullptr;
  p->shape.output = nullptr;
  p->shape.owned_input = nullptr;
  try {
    config::Choice choice = pin ? *pin
                                : choose_algorithm(call, context.ranks, context.direct, context.node_ranks,
                                                   context.verbose && context.rank == 0, context.shared_cores,
                                                   context.reads_peers);
    if (pin && call.options.segment_bytes) choice.segment_bytes = call.options.segment_bytes;
    p->algorithm = std::move(choice.algorithm);
    p->segment_bytes = choice.segment_bytes;
  } catch (const Error& e) {  // a malformed EARLYBIRD_PROFILE
    p->description = describe(call, "auto", context.rank, context.ranks);
    p->invalid = e.what();
    return p;
  }
  p->description = describe(call, p->algorithm, context.rank, context.ranks);
  p->invalid = shape_problem(call, p->algorithm, context.ranks);
  if (!p->invalid.empty()) return p;
  p->info = coll::find_algorithm(call.collective, p->algorithm);
  if (p->info->arrival == coll::ArrivalOrder::chosen)
    p->balanced = config::fastest_schedule(call.count * size_of(call.type), context.ranks, context.direct,
                                           context.node_ranks, context.shared_cores, context.reads_peers)
                      .name;
  p->signature = signature_of(call, p->algorithm);
  p->timeout = call.options.timeout.count() > 0 ? call.options.timeout : std::chrono::milliseconds(context.timeout_ms);
  p->straggler_after = call.options.straggler_after.count() > 0
                           ? call.options.straggler_after
                           : std::chrono::milliseconds(context.straggler_after_ms);
  if (p->info->executor == coll::Executor::peer_reads && context.reads_peers)
    p->executor = coll::Executor::peer_reads;
  if (p->info->executor == coll::Executor::inline_lines && fits_inline_lines(call, context))
    p->executor = coll::Executor::inline_lines;
  try {
    plan_batches(*p, context, plans);
  } catch (const std::exception& e) {
    p->invalid = e.what();
    return p;
  }
  p->caller_run = caller_may_run(*p, context);
  if (!pap::arrival_ordered(*p->info))
    p->static_binding = std::make_shared<StaticBinding>(context.ranks, call.root, context.node_ranks);
  return p;
}

// A call too large for one window lane splits into batches, each a complete
// collective of its own over a consecutive element range that fits one lane:
// for allgather and reduce_scatter the same range of every rank's block.
void CommCore::plan_batches(Prepared& p, const ShapeContext& context, PlanCache& plans) {
  const CollectiveCall& call = p.shape;
  const std::size_t elem = size_of(call.type);
  const std::size_t segment_elems = p.segment_bytes ? std::max<std::size_t>(1, p.segment_bytes / elem) : 0;
  const bool by_arrival = pap::arrival_ordered(*p.info);
  // Arrival-ordered calls plan the ring as a stand-in until the decision.
  PlanCache::Key key{call.collective, by_arrival ? "ring" : p.algorithm, call.count, segment_elems,
                     call.options.fanout, RootRotation(context.ranks, call.root, context.node_ranks).virtual_of(context.rank), elem, {}};
  // The inline lines and peer reads run no plan (building one was most of a
  // tiny call's first-time cost) and need no scratch: one batch.
  if (p.executor != coll::Executor::steps) {
    p.per_batch = call.count;
    p.batch_keys.push_back(key);
    p.batch_plans.push_back(nullptr);
    return;
  }
  const std::size_t wanted = call.count == 0 ? 1
                             : by_arrival   ? plans.arrival_batch_count(key, p.balanced)
                                            : plans.batch_count(key);
  p.per_batch = call.count == 0 ? 0 : (call.count + wanted - 1) / wanted;
  const std::size_t batches = call.count == 0 ? 1 : (call.count + p.per_batch - 1) / p.per_batch;
  for (std::size_t b = 0; b < batches; ++b) {
    key.count = std::min(p.per_batch, call.count - b * p.per_batch);
    p.batch_keys.push_back(key);
    p.batch_plans.push_back(plans.plan(key));
  }
}

// Batch `b`'s slice of the user's buffers (a consecutive element range; of
// every block for allgather and reduce_scatter, whose blocks then lie further
// apart in the user's buffer than in the batch's plan).
OperationBuffers CommCore::buffers_of(const CollectiveCall& call, const Prepared& p, std::size_t b) {
  const std::size_t elem = size_of(call.type);
  const auto offset = static_cast<std::ptrdiff_t>(b * p.per_batch * elem);
  const auto* in = static_cast<const std::byte*>(call.input);
  auto* out = static_cast<std::byte*>(call.output);
  OperationBuffers buffers{in ? in + offset : nullptr, out ? out + offset : nullptr, call.type, call.op,
                           call.owned_input, {}};
  const std::size_t batch_count = p.batch_keys[b].count;
  if (p.batch_keys.size() > 1 && call.collective == coll::Collective::allgather)
    buffers.blocks = {coll::Buffer::output, batch_count, call.count};
  if (p.batch_keys.size() > 1 && call.collective == coll::Collective::reduce_scatter)
    buffers.blocks = {coll::Buffer::input, batch_count, call.count};
  return buffers;
}

// The queue entry of batch `b`, run by `task`.
CommCore::Pending CommCore::pending_of(const CollectiveCall& call, const Prepared& p, std::size_t b,
                                       std::shared_ptr<CollectiveTask> task, std::shared_ptr<FutureState> future) {
  const std::size_t batch_count = p.batch_keys[b].count;
  const std::size_t allreduce_bytes =
      call.collective == coll::Collective::allreduce ? batch_count * size_of(call.type) : 0;
  return {std::move(task), std::move(future), b + 1 == p.batch_keys.size(),
          coll::completion_implies_all_started(call.collective), p.straggler_after, allreduce_bytes, nullptr, 0};
}

// Batch `b` of the call: an Operation, the inline lines or peer reads.
CommCore::Pending CommCore::batch(const CollectiveCall& call, const std::shared_ptr<const Prepared>& prepared,
                                  std::size_t b, const CallContext& context) {
  const Prepared& p = *prepared;
  const PlanCache::Key& key = p.batch_keys[b];
  const OperationBuffers buffers = buffers_of(call, p, b);
  std::shared_ptr<const std::string> description(prepared, &p.description);
  std::shared_ptr<CollectiveTask> task;
  if (p.executor == coll::Executor::inline_lines) {
    task = std::make_shared<InlineCollective>(direct_windows_, rank_, lanes_, layout_, buffers,
                                              InlineCollective::Call{call.collective, call.root, key.count}, p.signature,
                                              p.timeout, std::move(description));
  } else if (p.executor == coll::Executor::peer_reads) {
    task = std::make_shared<PeerReads>(*transport_, direct_windows_, lanes_, layout_, buffers,
                                       PeerReads::Call{call.collective, call.root, key.count}, p.signature, p.timeout,
                                       std::move(description));
  } else {
    const OperationContext ctx{transport_.get(), engine_, &driver_, &lanes_, layout_, pap::arrival_ordered(*p.info)};
    task = std::make_shared<Operation>(p.batch_plans[b], binding_for(p, key, context.call, context.arrival_us), ctx,
                                       buffers, p.signature, p.timeout, std::move(description));
  }
  return pending_of(call, p, b, std::move(task), context.future);
}

// Above this a call takes long enough that a caller who did not ask to
// wait (CollectiveOptions::blocking) would rather compute meanwhile: the
// progress thread runs it.
constexpr std::size_t kCallerRunBytes = 64 * 1024;

// An arrival-ordered call is caller-run only where the windows are direct
// (one node): there it saves the hand-off (P = 2, 8 B: 13-16 -> 3.1-3.4 us;
// P = 4 on 2 cores: 122-129 -> 32-41 us). On the point-to-point transport it
// made every call of the job slower (2 x 1 emulated hosts: a ring of 8 B
// after it 46-57 -> 310-430 us), so there the progress thread runs it.
bool CommCore::caller_may_run(const Prepared& p, const ShapeContext& context) {
  if (context.caller_run_us <= 0 || p.batch_keys.size() != 1) return false;
  if (pap::arrival_ordered(*p.info) && !context.direct) return false;
  if (p.shape.options.blocking) return true;
  const coll::Shape shape = coll::shape_of(p.shape.collective, context.ranks, p.shape.count);
  return std::max(shape.input, shape.output) * size_of(p.shape.type) <= kCallerRunBytes;
}

}  // namespace earlybird::detail
