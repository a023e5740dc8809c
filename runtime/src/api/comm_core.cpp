#include "comm_core.hpp"

#include "../pap/arrival_policy.hpp"
#include "../pap/global_clock.hpp"

#include <earlybird/collectives/catalogue.hpp>
#include <earlybird/collectives/peers.hpp>

#include <algorithm>
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
      arrival_(*transport_, layout_, options.verbose),
      plans_(size_, layout_),
      lanes_(*transport_, size_) {}

CommCore::~CommCore() = default;

std::shared_ptr<CommCore> CommCore::create(ProgressEngine& engine, std::unique_ptr<Transport> transport,
                                           CommOptions options) {
  auto core = std::make_shared<CommCore>(engine, std::move(transport), options);
  if (core->transport_->needs_service()) {
    // Served from the start, and warmed up (connections across nodes are
    // made at first use) while the caller goes on.
    engine.submit([self = core] {
      self->serving_ = true;
      self->engine_->activate(self);
      try {
        self->round_trips();
      } catch (const std::exception& e) {
        self->mark_broken(std::string("warm-up at creation failed: ") + e.what());
      }
    });
  }
  return core;
}

// Rooted and plain collectives bind statically; arrival-ordered ones learn
// their plan and binding from the arrival session when they start.
std::unique_ptr<Binding> CommCore::binding_for(const coll::Algorithm& algorithm, const PlanCache::Key& key, int root,
                                               std::uint64_t call, std::int64_t arrival_us) {
  if (!pap::arrival_ordered(algorithm)) return std::make_unique<StaticBinding>(size_, root);
  auto plan_of = [this, key](const coll::Algorithm& decided, int virtual_rank,
                             const std::vector<std::uint32_t>& presteps) {
    PlanCache::Key chosen = key;
    chosen.algorithm = std::string(decided.name);
    chosen.virtual_rank = virtual_rank;
    chosen.presteps = presteps;
    auto plan = plans_.plan(chosen);
    if (!plans_.fits(*plan, key.elem_bytes))
      throw Error(chosen.algorithm + " with these pre-steps needs more scratch than the batch was sized for");
    return plan;
  };
  return arrival_.binding(algorithm, call, arrival_us, key.count * key.elem_bytes, plan_of);
}

// One Operation per batch. Elementwise collectives split into consecutive
// element ranges, each a complete collective of its own.
std::vector<CommCore::Pending> CommCore::operations(const CollectiveCall& call, const coll::Algorithm& algorithm,
                                                    std::uint64_t call_index,
                                                    const std::shared_ptr<FutureState>& future) {
  const std::size_t elem = size_of(call.type);
  const std::size_t segment_elems =
      call.options.segment_bytes ? std::max<std::size_t>(1, call.options.segment_bytes / elem) : 0;
  const bool by_arrival = pap::arrival_ordered(algorithm);
  // Arrival-ordered calls plan the ring as a stand-in until the decision.
  PlanCache::Key key{call.collective, by_arrival ? "ring" : std::string(algorithm.name), call.count, segment_elems,
              call.options.fanout, (rank_ - call.root + size_) % size_, elem, {}};
  const std::size_t wanted = call.count == 0 ? 1 : by_arrival ? plans_.arrival_batch_count(key) : plans_.batch_count(key);
  const std::size_t per_batch = call.count == 0 ? 0 : (call.count + wanted - 1) / wanted;
  const std::size_t batches = call.count == 0 ? 1 : (call.count + per_batch - 1) / per_batch;
  const auto timeout = call.options.timeout.count() > 0 ? call.options.timeout : options_.timeout;
  const std::uint64_t signature = signature_of(call, std::string(algorithm.name));
  const std::string description = describe(call, std::string(algorithm.name), rank_, size_);
  const bool all_started = coll::completion_implies_all_started(call.collective);
  const OperationContext ctx{transport_.get(), engine_, &lanes_, layout_};
  const std::int64_t arrival_us = pap::global_now_us(*transport_);
  const auto straggler_after =
      call.options.straggler_after.count() > 0 ? call.options.straggler_after : options_.straggler_after;

  std::vector<Pending> items;
  for (std::size_t b = 0; b < batches; ++b) {
    const std::size_t begin = b * per_batch;
    key.count = std::min(per_batch, call.count - begin);
    const auto offset = static_cast<std::ptrdiff_t>(begin * elem);
    const auto* in = static_cast<const std::byte*>(call.input);
    auto* out = static_cast<std::byte*>(call.output);
    const OperationBuffers buffers{in ? in + offset : nullptr, out ? out + offset : nullptr, call.type, call.op,
                                   call.owned_input};
    auto operation = std::make_shared<Operation>(plans_.plan(key), binding_for(algorithm, key, call.root, call_index,
                                                                            arrival_us),
                                                 ctx, buffers, signature, timeout, description);
    const std::size_t allreduce_bytes = call.collective == coll::Collective::allreduce ? key.count * elem : 0;
    items.push_back({std::move(operation), future, b + 1 == batches, all_started, straggler_after, allreduce_bytes});
  }
  return items;
}

Future CommCore::run(const CollectiveCall& call) {
  // Counted before validation so that ranks stay aligned even if one rank's
  // call is refused: estimates are matched to calls by this number.
  const std::uint64_t call_index = arrival_.count_call();
  const std::string algorithm = choose_algorithm(call, size_);
  const std::string description = describe(call, algorithm, rank_, size_);
  auto invalid = [&](const std::string& why) { return Future(failed_future(description + ": " + why)); };
  if (closed_) return invalid("the communicator is closed");
  if (const std::string why = invalid_reason(call, algorithm, rank_, size_); !why.empty()) return invalid(why);
  auto future = std::make_shared<FutureState>();
  try {
    enqueue(operations(call, *coll::find_algorithm(call.collective, algorithm), call_index, future));
  } catch (const std::exception& e) {
    return invalid(e.what());
  }
  return Future(future);
}

void CommCore::enqueue(std::vector<Pending> items) {
  engine_->submit([self = shared_from_this(), items = std::move(items)]() mutable {
    for (auto& item : items) self->queue_.push_back(std::move(item));
    self->engine_->activate(self);
  });
}

bool CommCore::poll(bool& still_active) {
  bool progressed = serving_ && transport_->poll_hook();
  if (active_.op) {
    progressed |= active_.op->poll();
    if (active_.op->finished()) {
      retire();
      progressed = true;
    } else {
      check_straggler();
    }
  }
  while (!active_.op && !queue_.empty()) {
    start_next();
    progressed = true;
  }
  if (!active_.op && queue_.empty() && !drain_waiters_.empty()) {
    serving_ = false;  // close(): the caller's thread serves the transport from here on
    // Completing a waiter may let close() return and the owner drop its
    // reference: take the list out first (the engine still holds this core).
    auto waiters = std::move(drain_waiters_);
    drain_waiters_.clear();
    for (auto& waiter : waiters) waiter->complete();
  }
  still_active = active_.op || !queue_.empty() || serving_;
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
  const bool talks = active_.op->talks_to_peers();
  const std::uint64_t sequence = talks ? next_sequence_++ : 0;
  if (talks) arrival_.entered(sequence);
  active_since_ = std::chrono::steady_clock::now();
  active_reported_ = false;
  active_.op->start(sequence);
  if (active_.op->finished()) retire();
}

void CommCore::mark_broken(const std::string& why) {
  if (broken_.empty()) broken_ = why;
}

void CommCore::retire() {
  if (auto error = active_.op->error()) {
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      mark_broken(e.what());
    }
    active_.future->fail(error);
  } else {
    if (active_.op->sequence() > 0) {
      lanes_.finished(active_.op->sequence(), active_.all_started);
      active_.op->binding().finished();
      if (active_.allreduce_bytes > 0) {
        const std::chrono::duration<double, std::micro> took = std::chrono::steady_clock::now() - active_since_;
        arrival_.allreduce_took(active_.allreduce_bytes, took.count());
      }
    }
    if (active_.last_of_call) active_.future->complete();
  }
  active_ = Pending{};
}

std::shared_ptr<CommCore> CommCore::split(int color, int key) {
  auto transport = transport_->split(color, key, layout_.total_bytes());
  if (!transport) return nullptr;
  return create(*engine_, std::move(transport), options_);
}

// A call waiting past its straggler threshold asks every rank (one remote
// read each, once per call) which collective it last entered.
void CommCore::check_straggler() {
  const auto waited = std::chrono::steady_clock::now() - active_since_;
  if (active_reported_ || active_.straggler_after.count() <= 0 || waited < active_.straggler_after) return;
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
  engine_->submit([self = shared_from_this(), call, estimate_us] {
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
  engine_->submit([self = shared_from_this(), future, what] {
    try {
      self->round_trips();
    } catch (const std::exception& e) {
      future->fail(std::make_exception_ptr(Error(what + ": " + e.what())));
      return;
    }
    future->complete();
  });
  return Future(future);
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
  engine_->submit([self = shared_from_this(), drained] {
    self->drain_waiters_.push_back(drained);
    self->engine_->activate(self);
  });
  drained->wait();
  transport_->close();
}

}  // namespace earlybird::detail
