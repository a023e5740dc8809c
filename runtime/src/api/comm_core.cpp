#include "comm_core.hpp"

#include <earlybird/collectives/catalogue.hpp>

#include <algorithm>
#include <cstdlib>
#include <string>

namespace earlybird::detail {
namespace {

constexpr std::size_t kPlanCacheLimit = 256;

// Elementwise collectives can run as consecutive batches of element ranges.
bool batchable(coll::Collective collective) {
  return collective == coll::Collective::allreduce || collective == coll::Collective::reduce ||
         collective == coll::Collective::bcast;
}

std::size_t env_size(const char* name, std::size_t fallback) {
  const char* value = std::getenv(name);
  if (!value || !*value) return fallback;
  char* end = nullptr;
  const unsigned long long parsed = std::strtoull(value, &end, 10);
  if (*end != '\0' || parsed == 0) throw Error(std::string("earlybird: ") + name + "=" + value + " is not a positive integer");
  return static_cast<std::size_t>(parsed);
}

}  // namespace

CommOptions comm_options_from_environment() {
  CommOptions o;
  o.scratch_bytes = env_size("EARLYBIRD_SCRATCH_BYTES", o.scratch_bytes);
  o.timeout = std::chrono::milliseconds(env_size("EARLYBIRD_TIMEOUT_MS", static_cast<std::size_t>(o.timeout.count())));
  return o;
}

WindowLayout layout_for(const CommOptions& options) {
  WindowLayout layout;
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
      layout_(layout_for(options)),
      rank_(transport_->rank()),
      size_(transport_->size()),
      lanes_(*transport_, size_) {}

CommCore::~CommCore() = default;

std::shared_ptr<const coll::RankPlan> CommCore::plan_for(const PlanKey& key) {
  {
    std::lock_guard lock(cache_mutex_);
    if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  }
  const coll::Algorithm* info = coll::find_algorithm(key.collective, key.algorithm);
  coll::AlgorithmParams params;
  params.segment_elems = key.segment_elems;
  params.fanout = key.fanout;
  auto plan = std::make_shared<const coll::RankPlan>(
      coll::project(info->make(size_, key.count, params, key.elem_bytes), key.virtual_rank));
  std::lock_guard lock(cache_mutex_);
  if (cache_.size() >= kPlanCacheLimit) cache_.clear();
  cache_.emplace(key, plan);
  return plan;
}

bool CommCore::fits(const coll::RankPlan& plan, std::size_t elem_bytes) const {
  return plan.max_scratch_elems * elem_bytes <= layout_.scratch_bytes &&
         plan.max_flags <= layout_.flags_per_lane;
}

// How many batches a collective needs so that each batch's schedule fits one
// lane of the window. Deterministic, so all ranks agree.
std::size_t CommCore::batch_count(PlanKey key) {
  const std::size_t count = key.count;
  std::size_t batches = 1;
  for (;;) {
    key.count = (count + batches - 1) / batches;
    const auto plan = plan_for(key);
    if (fits(*plan, key.elem_bytes)) return batches;
    if (key.count <= 1 || !batchable(key.collective))
      throw Error("the window's scratch (" + std::to_string(layout_.scratch_bytes) + " bytes per lane) is too small: " +
                  key.algorithm + " needs " + std::to_string(plan->max_scratch_elems * key.elem_bytes) +
                  " bytes for this call" + (batchable(key.collective) ? "" : " (no batching for this collective)") +
                  "; raise EARLYBIRD_SCRATCH_BYTES");
    const double need = static_cast<double>(plan->max_scratch_elems * key.elem_bytes) /
                        static_cast<double>(layout_.scratch_bytes);
    const double flags = static_cast<double>(plan->max_flags) / static_cast<double>(layout_.flags_per_lane);
    const auto grow = static_cast<std::size_t>(static_cast<double>(batches) * std::max(need, flags) * 1.05) + 1;
    batches = std::max(batches + 1, grow);
  }
}

// One Operation per batch. Elementwise collectives split into consecutive
// element ranges, each a complete collective of its own.
std::vector<CommCore::Pending> CommCore::operations(const CollectiveCall& call, const std::string& algorithm,
                                                    const std::shared_ptr<FutureState>& future) {
  const std::size_t elem = size_of(call.type);
  const int virtual_rank = (rank_ - call.root + size_) % size_;
  const std::size_t segment_elems =
      call.options.segment_bytes ? std::max<std::size_t>(1, call.options.segment_bytes / elem) : 0;
  PlanKey key{call.collective, algorithm, call.count, segment_elems, call.options.fanout, virtual_rank, elem};
  const std::size_t wanted = call.count == 0 ? 1 : batch_count(key);
  const std::size_t per_batch = call.count == 0 ? 0 : (call.count + wanted - 1) / wanted;
  const std::size_t batches = call.count == 0 ? 1 : (call.count + per_batch - 1) / per_batch;
  const auto timeout = call.options.timeout.count() > 0 ? call.options.timeout : options_.timeout;
  const std::uint64_t signature = signature_of(call, algorithm);
  const std::string description = describe(call, algorithm, rank_, size_);
  const bool all_started = coll::completion_implies_all_started(call.collective);
  const OperationContext ctx{transport_.get(), engine_, &lanes_, layout_, call.root};

  std::vector<Pending> items;
  for (std::size_t b = 0; b < batches; ++b) {
    const std::size_t begin = b * per_batch;
    key.count = std::min(per_batch, call.count - begin);
    const auto offset = static_cast<std::ptrdiff_t>(begin * elem);
    const auto* in = static_cast<const std::byte*>(call.input);
    auto* out = static_cast<std::byte*>(call.output);
    const OperationBuffers buffers{in ? in + offset : nullptr, out ? out + offset : nullptr, call.type, call.op,
                                   call.owned_input};
    auto operation = std::make_shared<Operation>(plan_for(key), ctx, buffers, signature, timeout, description);
    items.push_back({std::move(operation), future, b + 1 == batches, all_started});
  }
  return items;
}

Future CommCore::run(const CollectiveCall& call) {
  const std::string algorithm = choose_algorithm(call, size_);
  const std::string description = describe(call, algorithm, rank_, size_);
  auto invalid = [&](const std::string& why) { return Future(failed_future(description + ": " + why)); };
  if (closed_) return invalid("the communicator is closed");
  if (const std::string why = invalid_reason(call, algorithm, rank_, size_); !why.empty()) return invalid(why);
  auto future = std::make_shared<FutureState>();
  try {
    submit(operations(call, algorithm, future));
  } catch (const std::exception& e) {
    return invalid(e.what());
  }
  return Future(future);
}

void CommCore::submit(std::vector<Pending> items) {
  engine_->submit([self = shared_from_this(), items = std::move(items)]() mutable {
    for (auto& item : items) self->queue_.push_back(std::move(item));
    self->engine_->activate(self);
  });
}

bool CommCore::poll(bool& still_active) {
  bool progressed = false;
  if (active_.op) {
    progressed = active_.op->poll();
    if (active_.op->finished()) {
      retire();
      progressed = true;
    }
  }
  while (!active_.op && !queue_.empty()) {
    start_next();
    progressed = true;
  }
  still_active = active_.op || !queue_.empty();
  if (!still_active) {
    // Completing a waiter may let close() return and the owner drop its
    // reference: take the list out first (the engine still holds this core).
    auto waiters = std::move(drain_waiters_);
    drain_waiters_.clear();
    for (auto& waiter : waiters) waiter->complete();
  }
  return progressed;
}

void CommCore::start_next() {
  active_ = std::move(queue_.front());
  queue_.pop_front();
  if (!broken_.empty()) {
    active_.op->fail("not run: an earlier collective on this communicator failed (" + broken_ + ")");
    retire();
    return;
  }
  active_.op->start(active_.op->talks_to_peers() ? next_sequence_++ : 0);
  if (active_.op->finished()) retire();
}

void CommCore::retire() {
  if (auto error = active_.op->error()) {
    if (broken_.empty()) {
      try {
        std::rethrow_exception(error);
      } catch (const std::exception& e) {
        broken_ = e.what();
      }
    }
    active_.future->fail(error);
  } else {
    if (active_.op->sequence() > 0) lanes_.finished(active_.op->sequence(), active_.all_started);
    if (active_.last_of_call) active_.future->complete();
  }
  active_ = Pending{};
}

std::shared_ptr<CommCore> CommCore::split(int color, int key) {
  auto transport = transport_->split(color, key, layout_.total_bytes());
  if (!transport) return nullptr;
  return std::make_shared<CommCore>(*engine_, std::move(transport), options_);
}

void CommCore::monitor_phase_begin() {}
void CommCore::monitor_edge(double) {}
void CommCore::monitor_phase_end() {}
std::optional<StragglerReport> CommCore::straggler_report() const { return std::nullopt; }

void CommCore::close() {
  if (closed_.exchange(true)) return;
  // Collectives already submitted still run; wait for the queue to drain.
  auto drained = std::make_shared<FutureState>();
  engine_->submit([self = shared_from_this(), drained] {
    self->drain_waiters_.push_back(drained);
    self->engine_->activate(self);
  });
  drained->wait();
  transport_->close();
}

}  // namespace earlybird::detail
