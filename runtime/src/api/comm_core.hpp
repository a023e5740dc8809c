// CommCore: the state behind a Communicator handle — the queue, the plans
// (plan_cache.hpp) and the batches. User threads submit collectives (validated, planned and cut
// into batches on the caller's thread); the progress thread runs them one
// after another, in submission order, so every rank runs them in the same
// order. Arrival-pattern state (monitoring, arrival-ordered bindings,
// straggler reports) is the ArrivalSession's (pap/arrival_session.hpp).
#pragma once

#include "../config/environment.hpp"
#include "../exec/lane_guard.hpp"
#include "../exec/operation.hpp"
#include "../pap/arrival_session.hpp"
#include "../progress/progress_engine.hpp"
#include "../rma/transport.hpp"
#include "../rma/window_layout.hpp"
#include "collective_call.hpp"
#include "plan_cache.hpp"

#include <earlybird/collectives/plan.hpp>
#include <earlybird/communicator.hpp>

#include <atomic>
#include <chrono>
#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace earlybird::detail {

using config::CommOptions;

// The window of a communicator of `ranks` ranks.
WindowLayout layout_for(const CommOptions& options, int ranks);

class CommCore : public Pollable, public std::enable_shared_from_this<CommCore> {
 public:
  // `engine` must outlive the core (Runtime and SimWorld own both). Use
  // create(): a transport that needs service is polled from the start.
  CommCore(ProgressEngine& engine, std::unique_ptr<Transport> transport, CommOptions options);
  static std::shared_ptr<CommCore> create(ProgressEngine& engine, std::unique_ptr<Transport> transport,
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
  bool urgent() const override { return active_.op || !queue_.empty(); }

  // Communicator::phase_begin, edge, phase_end, straggler_report, last_decision.
  pap::ArrivalSession& arrival() { return arrival_; }
  void edge(double fraction);
  // Communicator::warm_up: round_trips() on the progress thread, in submission
  // order with this communicator's other requests; fails with the cause
  // (naming the rank) or at once on a closed communicator.
  Future warm_up();

 private:
  struct Pending {
    std::shared_ptr<Operation> op;
    std::shared_ptr<FutureState> future;
    bool last_of_call = true;
    bool all_started = false;  // completing it implies every rank started it
    std::chrono::milliseconds straggler_after{0};  // 0: no straggler report
    std::size_t allreduce_bytes = 0;  // an allreduce's bytes (its time feeds tau); 0 otherwise
  };
  std::unique_ptr<Binding> binding_for(const coll::Algorithm& algorithm, const PlanCache::Key& key, int root,
                                       std::uint64_t call, std::int64_t arrival_us);
  std::vector<Pending> operations(const CollectiveCall& call, const coll::Algorithm& algorithm,
                                  std::uint64_t call_index, const std::shared_ptr<FutureState>& future);
  void enqueue(std::vector<Pending> items);
  void start_next();
  void retire();
  void check_straggler();
  void mark_broken(const std::string& why);
  // Progress thread: one round trip (a read of the warm-up word) to every peer
  // of coll::common_peers, one after another. Throws the transport's error
  // prefixed with the peer.
  void round_trips();

  ProgressEngine* engine_;
  std::unique_ptr<Transport> transport_;
  CommOptions options_;
  WindowLayout layout_;
  int rank_;
  int size_;
  std::atomic<bool> closed_{false};
  pap::ArrivalSession arrival_;

  PlanCache plans_;

  // Progress thread only.
  std::deque<Pending> queue_;
  Pending active_;
  std::uint64_t next_sequence_ = 1;
  LaneGuard lanes_;
  std::chrono::steady_clock::time_point active_since_;
  bool active_reported_ = false;
  bool serving_ = false;  // polling a transport that needs service, until close()
  std::string broken_;
  std::vector<std::shared_ptr<FutureState>> drain_waiters_;
};

std::shared_ptr<FutureState> failed_future(const std::string& message);
// Wraps a core in the shared handle Communicator holds: dropping the last copy
// closes the communicator.
std::shared_ptr<CommCore> user_handle(std::shared_ptr<CommCore> core);

}  // namespace earlybird::detail
