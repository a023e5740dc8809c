// CommCore: the state behind a Communicator handle. User threads submit
// collectives (validated, planned and cut into batches on the caller's
// thread); the progress thread runs them one after another, in submission
// order, so every rank runs them in the same order.
#pragma once

#include "../exec/lane_guard.hpp"
#include "../exec/operation.hpp"
#include "../pap/arrival_board.hpp"
#include "../pap/step_cost.hpp"
#include "collective_call.hpp"
#include "../progress/progress_engine.hpp"
#include "../rma/transport.hpp"
#include "../rma/window_layout.hpp"

#include <earlybird/collectives/plan.hpp>
#include <earlybird/communicator.hpp>

#include <atomic>
#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>

namespace earlybird::detail {

struct CommOptions {
  std::size_t scratch_bytes = 8u << 20;  // per lane
  std::size_t flags_per_lane = 1u << 16;
  std::chrono::milliseconds timeout{120000};
  std::chrono::milliseconds straggler_after{0};  // EARLYBIRD_STRAGGLER_MS; 0: off
  bool verbose = false;                          // EARLYBIRD_VERBOSE=1
};

// Reads EARLYBIRD_SCRATCH_BYTES and EARLYBIRD_TIMEOUT_MS over the defaults.
CommOptions comm_options_from_environment();
// A communicator of `ranks` ranks.
WindowLayout layout_for(const CommOptions& options, int ranks);

class CommCore : public Pollable, public std::enable_shared_from_this<CommCore> {
 public:
  // `engine` must outlive the core (Runtime and SimWorld own both).
  CommCore(ProgressEngine& engine, std::unique_ptr<Transport> transport,
           CommOptions options);
  ~CommCore() override;

  int rank() const { return rank_; }
  int size() const { return size_; }

  Future run(const CollectiveCall& call);
  std::shared_ptr<CommCore> split(int color, int key);
  // Waits for every submitted collective, then releases the window. Collective
  // (frees MPI objects); idempotent.
  void close();

  bool poll(bool& still_active) override;

  // Arrival-pattern monitoring (Communicator::phase_begin, edge, phase_end).
  void monitor_phase_begin();
  void monitor_edge(double fraction);
  void monitor_phase_end();
  std::optional<StragglerReport> straggler_report() const;

 private:
  struct Pending {
    std::shared_ptr<Operation> op;
    std::shared_ptr<FutureState> future;
    bool last_of_call = true;
    bool all_started = false;  // completing it implies every rank started it
    std::chrono::milliseconds straggler_after{0};  // 0: no straggler report
    std::size_t allreduce_bytes = 0;  // an allreduce's bytes (its time feeds tau); 0 otherwise
  };
  // What identifies a plan: the call's collective, algorithm, parameters and
  // element count, and this rank's virtual rank (its distance from the root).
  struct PlanKey {
    coll::Collective collective;
    std::string algorithm;
    std::size_t count;
    std::size_t segment_elems;
    int fanout;
    int virtual_rank;
    std::size_t elem_bytes;
    std::vector<std::uint32_t> presteps;  // pre_reduced_ring's k
    auto operator<=>(const PlanKey&) const = default;
  };
  std::shared_ptr<const coll::RankPlan> plan_for(const PlanKey& key);
  bool fits(const coll::RankPlan& plan, std::size_t elem_bytes) const;
  std::size_t batch_count(PlanKey key);
  std::vector<Pending> operations(const CollectiveCall& call, const std::string& algorithm, std::uint64_t call_index,
                                  const std::shared_ptr<FutureState>& future);
  std::size_t arrival_batch_count(PlanKey key);
  ArrivalBinding arrival_binding(const std::string& algorithm, const PlanKey& key, std::uint64_t call,
                                 std::int64_t arrival_us);
  void check_straggler();
  void warm_up();
  void submit(std::vector<Pending> items);
  void start_next();
  void retire();

  ProgressEngine* engine_;
  std::unique_ptr<Transport> transport_;
  CommOptions options_;
  WindowLayout layout_;
  int rank_;
  int size_;
  std::atomic<bool> closed_{false};

  std::mutex cache_mutex_;
  std::map<PlanKey, std::shared_ptr<const coll::RankPlan>> cache_;

  // Progress thread only.
  std::deque<Pending> queue_;
  Pending active_;
  std::uint64_t next_sequence_ = 1;
  std::uint64_t next_epoch_ = 0;  // arrival-ordered operations started
  LaneGuard lanes_;
  pap::ArrivalBoard board_;
  std::chrono::steady_clock::time_point active_since_;
  bool active_reported_ = false;
  std::vector<int> warm_peers_;  // whom the last arrival-ordered operation wrote to

  // Caller threads.
  std::atomic<std::uint64_t> calls_{0};  // collective calls submitted (numbers estimates)
  pap::AllreduceHistory allreduce_history_;      // written by the progress thread
  std::mutex monitor_mutex_;
  std::optional<std::chrono::steady_clock::time_point> phase_begin_;
  mutable std::mutex straggler_mutex_;
  std::optional<StragglerReport> straggler_;
  std::string broken_;
  std::vector<std::shared_ptr<FutureState>> drain_waiters_;
};

std::shared_ptr<FutureState> failed_future(const std::string& message);
// Wraps a core in the shared handle Communicator holds: dropping the last copy
// closes the communicator.
std::shared_ptr<CommCore> user_handle(std::shared_ptr<CommCore> core);

}  // namespace earlybird::detail
