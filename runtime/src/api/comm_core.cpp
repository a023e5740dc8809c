#include "comm_core.hpp"

#include <earlybird/collectives/allreduce.hpp>

#include <algorithm>
#include <cstdlib>
#include <string>

namespace earlybird::detail {
namespace {

constexpr std::size_t kPlanCacheLimit = 256;

std::size_t env_size(const char* name, std::size_t fallback) {
  const char* value = std::getenv(name);
  if (!value || !*value) return fallback;
  char* end = nullptr;
  const unsigned long long parsed = std::strtoull(value, &end, 10);
  if (*end != '\0' || parsed == 0) throw Error(std::string("earlybird: ") + name + "=" + value + " is not a positive integer");
  return static_cast<std::size_t>(parsed);
}

// Default choice until the cost model lands: few rounds for small vectors,
// the bandwidth-optimal ring otherwise (at P = 2 the ring is one exchange of
// half vectors, never worse). Thresholds from the sweeps in
// docs/benchmarks.md (P = 2 and 4 on a 2-core machine).
std::string default_allreduce(std::size_t bytes, int ranks) {
  return ranks > 2 && bytes <= 8 * 1024 ? "recursive_doubling" : "ring";
}

// FNV-1a, folded into a flag's signature bits.
std::uint64_t signature_of(const std::string& algorithm, std::size_t count, Datatype type, Op op,
                           std::size_t segment_elems) {
  std::uint64_t h = 1469598103934665603ull;
  auto mix = [&](std::uint64_t v) {
    for (int i = 0; i < 8; ++i, v >>= 8) h = (h ^ (v & 0xff)) * 1099511628211ull;
  };
  for (char c : algorithm) mix(static_cast<unsigned char>(c));
  mix(count);
  mix(static_cast<std::uint64_t>(type));
  mix(static_cast<std::uint64_t>(op));
  mix(segment_elems);
  return h ^ (h >> 24) ^ (h >> 48);
}

std::string algorithm_names() {
  std::string names;
  for (const auto& a : coll::allreduce_algorithms()) names += (names.empty() ? "" : ", ") + std::string(a.name);
  return names;
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
      size_(transport_->size()) {}

CommCore::~CommCore() = default;

std::shared_ptr<const coll::RankPlan> CommCore::plan_for(const std::string& algorithm, std::size_t count,
                                                         std::size_t segment_elems, std::size_t elem_bytes) {
  const auto key = std::make_tuple(algorithm, count, segment_elems);
  {
    std::lock_guard lock(cache_mutex_);
    if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  }
  const coll::Algorithm* info = coll::find_allreduce(algorithm);
  coll::AlgorithmParams params;
  params.segment_elems = segment_elems;
  auto plan = std::make_shared<const coll::RankPlan>(
      coll::project(info->make(size_, count, params, elem_bytes), rank_));
  std::lock_guard lock(cache_mutex_);
  if (cache_.size() >= kPlanCacheLimit) cache_.clear();
  cache_.emplace(key, plan);
  return plan;
}

bool CommCore::fits(const coll::RankPlan& plan, std::size_t elem_bytes) const {
  return plan.max_scratch_elems * elem_bytes <= layout_.scratch_bytes &&
         plan.max_flags <= layout_.flags_per_lane;
}

// How many batches a collective of `count` elements needs so that each batch's
// schedule fits one lane of the window. Deterministic, so all ranks agree.
std::size_t CommCore::batch_count(const std::string& algorithm, std::size_t count,
                                  std::size_t segment_elems, std::size_t elem_bytes) {
  std::size_t batches = 1;
  for (;;) {
    const std::size_t per_batch = (count + batches - 1) / batches;
    const auto plan = plan_for(algorithm, per_batch, segment_elems, elem_bytes);
    if (fits(*plan, elem_bytes)) return batches;
    if (per_batch <= 1)
      throw Error("the window's scratch (" + std::to_string(layout_.scratch_bytes) +
                  " bytes per lane) cannot hold even one element for " + algorithm);
    const double need = static_cast<double>(plan->max_scratch_elems * elem_bytes) /
                        static_cast<double>(layout_.scratch_bytes);
    const double flags = static_cast<double>(plan->max_flags) / static_cast<double>(layout_.flags_per_lane);
    const auto grow = static_cast<std::size_t>(static_cast<double>(batches) * std::max(need, flags) * 1.05) + 1;
    batches = std::max(batches + 1, grow);
  }
}

Future CommCore::allreduce(const void* in, void* out, std::size_t count, Datatype type, Op op,
                           const AllreduceOptions& options) {
  const std::size_t elem = size_of(type);
  const std::string algorithm =
      options.algorithm.empty() ? default_allreduce(count * elem, size_) : options.algorithm;
  const std::string description = "earlybird allreduce(algorithm=" + algorithm + ", count=" +
                                  std::to_string(count) + ", type=" + to_string(type) + ", op=" +
                                  to_string(op) + ") on rank " + std::to_string(rank_) + " of " +
                                  std::to_string(size_);
  auto invalid = [&](const std::string& why) { return Future(failed_future(description + ": " + why)); };
  if (closed_) return invalid("the communicator is closed");
  if (!coll::find_allreduce(algorithm)) return invalid("unknown algorithm; known: " + algorithm_names());
  if (!op_supports(op, type)) return invalid(std::string("operator ") + to_string(op) + " is not defined for " + to_string(type));
  if (count > 0 && (!in || !out)) return invalid("null buffer");
  const auto* in_bytes = static_cast<const std::byte*>(in);
  auto* out_bytes = static_cast<std::byte*>(out);
  const std::size_t bytes = count * elem;
  if (in_bytes != out_bytes && count > 0 && in_bytes < out_bytes + bytes && out_bytes < in_bytes + bytes)
    return invalid("input and output overlap without being the same buffer");

  const std::size_t segment_elems = options.segment_bytes ? std::max<std::size_t>(1, options.segment_bytes / elem) : 0;
  const auto timeout = options.timeout.count() > 0 ? options.timeout : options_.timeout;
  const std::uint64_t signature = signature_of(algorithm, count, type, op, segment_elems);
  auto future = std::make_shared<FutureState>();
  std::vector<Pending> items;
  try {
    const std::size_t batches = count == 0 ? 1 : batch_count(algorithm, count, segment_elems, elem);
    const std::size_t per_batch = count == 0 ? 0 : (count + batches - 1) / batches;
    for (std::size_t begin = 0; begin < count || items.empty(); begin += per_batch) {
      const std::size_t n = std::min(per_batch, count - begin);
      OperationContext ctx{transport_.get(), engine_, layout_};
      OperationBuffers buffers{in_bytes + begin * elem, out_bytes + begin * elem, type, op};
      auto operation = std::make_shared<Operation>(plan_for(algorithm, n, segment_elems, elem), ctx, buffers,
                                                   signature, timeout, description);
      items.push_back({std::move(operation), future, false});
      if (per_batch == 0) break;
    }
  } catch (const std::exception& e) {
    return invalid(e.what());
  }
  items.back().last_of_call = true;
  submit(std::move(items));
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
  } else if (active_.last_of_call) {
    active_.future->complete();
  }
  active_ = Pending{};
}

std::shared_ptr<CommCore> CommCore::split(int color, int key) {
  auto transport = transport_->split(color, key, layout_.total_bytes());
  if (!transport) return nullptr;
  return std::make_shared<CommCore>(*engine_, std::move(transport), options_);
}

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
