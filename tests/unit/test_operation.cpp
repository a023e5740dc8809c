// Operation (runtime/src/exec/operation.hpp) as a pure dataflow executor:
// one rank's plan run under a fake Binding over a fake Transport that
// records what goes out and whose window the test writes peers' flags into.
// Checks that transfers and notifications go to the ranks the binding names,
// that a plan decided late runs only once decided, that a step to a peer
// not yet bound waits for the binding to learn it, and that the watchdog and
// the mismatch check name the binding's ranks.
#include <doctest/doctest.h>

#include "exec/binding.hpp"
#include "exec/lane_guard.hpp"
#include "exec/operation.hpp"
#include "progress/progress_engine.hpp"
#include "rma/transport.hpp"
#include "rma/window_layout.hpp"

#include <earlybird/collectives/allreduce.hpp>
#include <earlybird/collectives/bcast.hpp>
#include <earlybird/error.hpp>
#include <earlybird/collectives/plan.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <future>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

using namespace earlybird;

namespace {

constexpr auto kBound = std::chrono::seconds(10);

// One rank's view of the fabric: its own window is real memory; what it sends
// is recorded, not delivered.
class FakeTransport final : public Transport {
 public:
  FakeTransport(int rank, int size, std::size_t bytes) : rank_(rank), size_(size), window_(bytes) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::byte* window() override { return window_.data(); }
  std::size_t window_bytes() const override { return window_.size(); }
  void put(int target, std::size_t, const void*, std::size_t) override { record(puts_, target); }
  void get(int target, std::size_t, void*, std::size_t) override { record(gets_, target); }
  void notify(int target, std::size_t, std::uint64_t) override { record(notified_, target); }
  std::uint64_t load_flag(std::size_t offset) override {
    std::lock_guard lock(mutex_);
    std::uint64_t v = 0;
    std::memcpy(&v, window_.data() + offset, sizeof v);
    return v;
  }
  std::uint64_t load_remote(int, std::size_t) override { return 0; }
  void store_local(std::size_t offset, std::uint64_t value) override { raise(offset, value); }
  std::uint64_t fetch_add(int, std::size_t, std::uint64_t) override { return 0; }
  void load_remote_words(int, std::size_t, std::uint64_t* out, std::size_t count) override {
    std::fill(out, out + count, 0);
  }
  void post_remote_words(int, std::size_t, const std::uint64_t*, std::size_t) override {}
  std::int64_t clock_origin_ns() const override { return 0; }
  std::unique_ptr<Transport> split(int, int, WindowSize) override { return nullptr; }
  bool waits_for_messages() const override { return by_messages.load(); }
  bool sends_pending() override { return sends_stuck.load(); }
  // As a transport of messages whose sends MPI has not completed.
  std::atomic<bool> by_messages{false}, sends_stuck{false};

  // A peer's notification arriving in this rank's window.
  void raise(std::size_t offset, std::uint64_t value) {
    std::lock_guard lock(mutex_);
    std::memcpy(window_.data() + offset, &value, sizeof value);
  }
  std::set<int> puts() const { return copy(puts_); }
  std::set<int> notified() const { return copy(notified_); }

 private:
  void record(std::set<int>& to, int target) {
    std::lock_guard lock(mutex_);
    to.insert(target);
  }
  std::set<int> copy(const std::set<int>& from) const {
    std::lock_guard lock(mutex_);
    return from;
  }
  int rank_, size_;
  mutable std::mutex mutex_;
  std::vector<std::byte> window_;
  std::set<int> puts_, gets_, notified_;
};

// A binding the test steers: an order (rank by virtual rank, -1 unknown),
// decided at once or only after `decide_after` refreshes, learning an
// unknown rank at the first refresh after `learn()` was called.
class FakeBinding final : public Binding {
 public:
  FakeBinding(std::vector<int> order, std::shared_ptr<const coll::RankPlan> plan, int decide_after = 0)
      : order_(std::move(order)), plan_(std::move(plan)), refreshes_to_decide_(decide_after) {}
  bool begin() override { return decided(); }
  bool refresh() override {
    ++refreshes_;
    if (refreshes_to_decide_ > 0) return --refreshes_to_decide_ == 0;
    if (pending_.empty()) return false;
    order_ = pending_;
    pending_.clear();
    return true;
  }
  bool decided() const override { return refreshes_to_decide_ == 0; }
  bool bound() const override { return std::find(order_.begin(), order_.end(), -1) == order_.end(); }
  std::shared_ptr<const coll::RankPlan> decided_plan() override { return plan_; }
  int rank_of(int v) const override { return order_[static_cast<std::size_t>(v)]; }
  std::string undecided_reason() const override { return "the fake decision never came"; }
  // Progress thread: the next refresh learns `order`.
  void learn(std::vector<int> order) { pending_ = std::move(order); }
  int refreshes() const { return refreshes_; }

 private:
  std::vector<int> order_, pending_;
  std::shared_ptr<const coll::RankPlan> plan_;
  int refreshes_to_decide_;
  int refreshes_ = 0;
};

// Polls one operation on the engine, holding the drive, until it finishes.
class OperationPoller final : public Pollable {
 public:
  OperationPoller(std::shared_ptr<Operation> op, earlybird::Driver& drive) : op_(std::move(op)), drive_(&drive) {}
  bool poll(bool& still_active) override {
    DriveHold hold(*drive_, false);
    REQUIRE(hold);
    drive_->run_posted();
    const bool progressed = op_->poll();
    still_active = !op_->finished();
    if (!still_active) done_.set_value();
    return progressed;
  }
  std::future<void> done() { return done_.get_future(); }

 private:
  std::shared_ptr<Operation> op_;
  earlybird::Driver* drive_;
  std::promise<void> done_;
};

// The message the operation failed with ("" if it did not fail).
std::string failure_of(const Operation& op) {
  if (!op.error()) return "";
  try {
    std::rethrow_exception(op.error());
  } catch (const Error& e) {
    return e.what();
  } catch (...) {
    return "not an earlybird::Error";
  }
}

constexpr int kRanks = 3;
constexpr std::size_t kCount = 30;

// A ring allreduce of kCount int32 at P = 3, this rank at virtual rank 1.
struct Fixture {
  Fixture() : transport(0, kRanks, layout().total_bytes()), lanes(transport, layout()) {}
  static WindowLayout layout() {
    WindowLayout l;
    l.ranks = kRanks;
    l.flags_per_lane = 64;
    l.scratch_bytes = 4096;
    return l;
  }
  std::shared_ptr<const coll::RankPlan> ring_plan(int virtual_rank) const {
    return std::make_shared<const coll::RankPlan>(coll::project(coll::allreduce_ring(kRanks, kCount), virtual_rank));
  }
  std::shared_ptr<Operation> operation(std::shared_ptr<const coll::RankPlan> plan, std::unique_ptr<Binding> binding,
                                       std::chrono::milliseconds timeout = std::chrono::milliseconds(10000)) {
    const OperationContext ctx{&transport, &engine, &drive, &lanes, layout()};
    const OperationBuffers buffers{reinterpret_cast<const std::byte*>(in.data()),
                                   reinterpret_cast<std::byte*>(out.data()), Datatype::int32, Op::sum, nullptr, {}};
    return std::make_shared<Operation>(std::move(plan), std::move(binding), ctx, buffers, kSignature, timeout,
                                       std::make_shared<const std::string>("test ring"));
  }
  // Starts `op` with sequence 1 on the progress thread and polls it.
  std::future<void> run(const std::shared_ptr<Operation>& op) {
    auto poller = std::make_shared<OperationPoller>(op, drive);
    auto done = poller->done();
    engine.submit([this, op, poller] {
      DriveHold hold(drive, false);
      op->start(1);
      engine.activate(poller);
    });
    return done;
  }
  // Every flag `plan` awaits, raised as its sources would: sequence 1, in
  // small lane 1 (the plan fits one) or large lane 1.
  void raise_all_flags(const coll::RankPlan& plan, std::uint64_t signature = kSignature) {
    const bool small = layout().fits_lane(true, plan.max_scratch_elems * sizeof(std::int32_t), plan.max_flags);
    const int lane = WindowLayout::lane_of(1, small).index;
    for (std::uint32_t f = 0; f < plan.flags; ++f) transport.raise(layout().flag_offset(lane, f), flag_value(1, signature));
  }
  // Ranks the plan writes to (puts, notifications) under `order`.
  static std::set<int> targets(const coll::RankPlan& plan, const std::vector<int>& order, bool data) {
    std::set<int> out;
    for (const coll::PlanStep& s : plan.steps) {
      if (data && s.kind == coll::StepKind::put) out.insert(order[static_cast<std::size_t>(s.peer)]);
      if (!data)
        for (std::uint32_t n = s.note_begin; n < s.note_end; ++n)
          out.insert(order[static_cast<std::size_t>(plan.notes[n].target)]);
    }
    return out;
  }
  static constexpr std::uint64_t kSignature = 0x5a5a5;
  FakeTransport transport;
  LaneGuard lanes;
  earlybird::Driver drive;  // the engine's thread holds it while it runs the operation
  std::vector<std::int32_t> in = std::vector<std::int32_t>(kCount, 1), out = std::vector<std::int32_t>(kCount, 0);
  ProgressEngine engine{EngineOptions{1, -1}};  // last: stopped first, before what its thread uses
};

}  // namespace

// A root's rotation (exec/binding.hpp): a bijection with the root at
// virtual rank 0 that keeps every node a block of consecutive virtual ranks,
// so a binomial bcast over N nodes crosses between nodes N - 1 times from
// any root; without nodes, v -> (v + root) mod P.
TEST_CASE("a root's rotation keeps nodes whole") {
  for (int ranks = 1; ranks <= 12; ++ranks) {
    for (int n = 0; n <= ranks; ++n) {
      if (n > 0 && ranks % n != 0) continue;
      const int block = n == 0 ? ranks : n;
      for (int root = 0; root < ranks; ++root) {
        const RootRotation rotation(ranks, root, n);
        CHECK(rotation.rank_of(0) == root);
        std::vector<int> seen(static_cast<std::size_t>(ranks), 0);
        for (int v = 0; v < ranks; ++v) {
          const int rank = rotation.rank_of(v);
          REQUIRE(rank >= 0);
          REQUIRE(rank < ranks);
          ++seen[static_cast<std::size_t>(rank)];
          CHECK(rotation.virtual_of(rank) == v);
          CHECK(rank / block == rotation.rank_of(v - v % block) / block);  // v's node block is one node
          if (n == 0 || n == 1 || n == ranks) CHECK(rank == (v + root) % ranks);
        }
        CHECK(std::all_of(seen.begin(), seen.end(), [](int times) { return times == 1; }));
      }
    }
  }
  const auto crossings = [](int ranks, int n, int root) {
    const RootRotation rotation(ranks, root, n);
    int crossed = 0;
    const coll::Schedule tree = coll::bcast_binomial(ranks, 16);
    for (const coll::Step& step : tree.steps())
      if (step.is_transfer() && rotation.rank_of(step.src.rank) / n != rotation.rank_of(step.dst.rank) / n) ++crossed;
    return crossed;
  };
  for (int root = 0; root < 8; ++root) {
    CHECK(crossings(8, 2, root) == 3);
    CHECK(crossings(8, 4, root) == 1);
  }
}

TEST_CASE("transfers and notifications go to the ranks the binding names") {
  Fixture fx;
  const std::vector<int> order{2, 0, 1};  // rank 0 stands at virtual rank 1
  const auto plan = fx.ring_plan(1);
  auto op = fx.operation(plan, std::make_unique<FakeBinding>(order, nullptr));
  auto done = fx.run(op);
  fx.raise_all_flags(*plan);
  REQUIRE(done.wait_for(kBound) == std::future_status::ready);
  CHECK(failure_of(*op).empty());
  CHECK(fx.transport.puts() == Fixture::targets(*plan, order, true));
  CHECK(fx.transport.notified() == Fixture::targets(*plan, order, false));
  CHECK(fx.transport.puts() == std::set<int>{1});  // the ring's successor of virtual 1 is virtual 2 = rank 1
}

TEST_CASE("a plan decided late: nothing runs until the binding has decided, then the decided plan runs") {
  Fixture fx;
  const std::vector<int> order{1, 0, 2};
  const auto decided = fx.ring_plan(1);
  const auto stand_in = fx.ring_plan(0);
  auto binding = std::make_unique<FakeBinding>(order, decided, /*decide_after=*/3);
  FakeBinding* fake = binding.get();
  auto op = fx.operation(stand_in, std::move(binding));
  auto done = fx.run(op);
  fx.raise_all_flags(*decided);
  REQUIRE(done.wait_for(kBound) == std::future_status::ready);
  CHECK(failure_of(*op).empty());
  CHECK(fake->refreshes() >= 3);
  CHECK(fx.transport.puts() == Fixture::targets(*decided, order, true));
  CHECK(fx.transport.puts() == std::set<int>{2});
}

TEST_CASE("a step to a peer not yet bound waits until the binding learns it") {
  Fixture fx;
  const auto plan = fx.ring_plan(1);
  auto binding = std::make_unique<FakeBinding>(std::vector<int>{2, 0, -1}, nullptr);
  FakeBinding* fake = binding.get();
  auto op = fx.operation(plan, std::move(binding));
  auto done = fx.run(op);
  // Until the executor has asked the binding a few times with virtual rank 2
  // unknown, nothing may have been put; then the binding learns it.
  const auto deadline = std::chrono::steady_clock::now() + kBound;
  for (;;) {
    std::promise<int> asked;
    auto answer = asked.get_future();
    fx.engine.submit([&] { asked.set_value(fake->refreshes()); });
    REQUIRE(answer.wait_for(kBound) == std::future_status::ready);
    if (answer.get() >= 3) break;
    REQUIRE(std::chrono::steady_clock::now() < deadline);
    std::this_thread::yield();
  }
  CHECK(fx.transport.puts().empty());
  fx.engine.submit([fake] { fake->learn({2, 0, 1}); });
  fx.raise_all_flags(*plan);
  REQUIRE(done.wait_for(kBound) == std::future_status::ready);
  CHECK(failure_of(*op).empty());
  CHECK(fx.transport.puts() == std::set<int>{1});
}

TEST_CASE("the watchdog names the bound rank whose notification never came; undecided plans name the reason") {
  Fixture fx;
  const std::vector<int> order{2, 0, 1};
  auto op = fx.operation(fx.ring_plan(1), std::make_unique<FakeBinding>(order, nullptr), std::chrono::milliseconds(50));
  REQUIRE(fx.run(op).wait_for(kBound) == std::future_status::ready);
  const std::string what = failure_of(*op);
  CHECK(what.find("watchdog") != std::string::npos);
  CHECK(what.find("rank 2") != std::string::npos);  // the ring's predecessor of virtual 1 is virtual 0 = rank 2

  Fixture never;
  auto undecided = never.operation(never.ring_plan(0),
                                   std::make_unique<FakeBinding>(order, never.ring_plan(1), /*decide_after=*/1000000),
                                   std::chrono::milliseconds(50));
  REQUIRE(never.run(undecided).wait_for(kBound) == std::future_status::ready);
  CHECK(failure_of(*undecided).find("the fake decision never came") != std::string::npos);
}

TEST_CASE("a flag with another collective's signature fails the operation, naming the bound rank") {
  Fixture fx;
  const std::vector<int> order{2, 0, 1};
  const auto plan = fx.ring_plan(1);
  auto op = fx.operation(plan, std::make_unique<FakeBinding>(order, nullptr));
  auto done = fx.run(op);
  fx.raise_all_flags(*plan, Fixture::kSignature + 1);
  REQUIRE(done.wait_for(kBound) == std::future_status::ready);
  const std::string what = failure_of(*op);
  CHECK(what.find("called a different collective") != std::string::npos);
  CHECK(what.find("rank 2") != std::string::npos);
}

TEST_CASE("over messages, an operation whose steps are done is not finished until its sends complete") {
  Fixture fx;
  fx.transport.by_messages = true;
  fx.transport.sends_stuck = true;
  const std::vector<int> order{2, 0, 1};
  const auto plan = fx.ring_plan(1);
  auto op = fx.operation(plan, std::make_unique<FakeBinding>(order, nullptr));
  auto done = fx.run(op);
  fx.raise_all_flags(*plan);
  CHECK(done.wait_for(std::chrono::milliseconds(100)) == std::future_status::timeout);
  CHECK(fx.transport.puts() == std::set<int>{1});  // the steps ran
  fx.transport.sends_stuck = false;
  REQUIRE(done.wait_for(kBound) == std::future_status::ready);
  CHECK(failure_of(*op).empty());
}

TEST_CASE("the watchdog names sends MPI never completed") {
  Fixture fx;
  fx.transport.by_messages = true;
  fx.transport.sends_stuck = true;
  const auto plan = fx.ring_plan(1);
  auto op = fx.operation(plan, std::make_unique<FakeBinding>(std::vector<int>{2, 0, 1}, nullptr),
                         std::chrono::milliseconds(50));
  auto done = fx.run(op);
  fx.raise_all_flags(*plan);
  REQUIRE(done.wait_for(kBound) == std::future_status::ready);
  CHECK(failure_of(*op).find("has not completed its messages") != std::string::npos);
}
