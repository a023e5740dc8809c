// ArrivalSession: one communicator's arrival-pattern state, in one place —
// the arrival board, the phase monitor (phase_begin / edge / phase_end), the
// collective-call numbering estimates are tagged with, the arrival epochs, τ's
// allreduce history, the warm-up peers, the straggler report and the last
// decision. The core asks it for a Binding per arrival-ordered operation and
// tells it when collectives enter and finish; it knows nothing of the queue.
//
// thread             calls
// caller             count_call, phase_begin, estimate, phase_end, binding,
//                    straggler_report, last_decision
// drive holder       publish_estimate, warm_up, entered, allreduce_took,
// (exec/driver.hpp)  report_stragglers, and the bindings it made
#pragma once

#include "../exec/binding.hpp"
#include "../exec/pending_plan.hpp"
#include "../rma/transport.hpp"
#include "../rma/window_layout.hpp"
#include "arrival_board.hpp"
#include "step_cost.hpp"

#include <earlybird/collectives/catalogue.hpp>
#include <earlybird/collectives/plan.hpp>
#include <earlybird/types.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace earlybird::pap {

// The plan of a decided algorithm at this rank's arrival position:
// (algorithm, virtual rank, pre-steps) -> plan, from the core's plan cache,
// or built on a TBB worker when the cache lacks it (exec/pending_plan.hpp).
using PlanFor = std::function<std::shared_ptr<PendingPlan>(
    const coll::Algorithm& algorithm, int virtual_rank, const std::vector<std::uint32_t>& presteps)>;

class ArrivalSession {
 public:
  ArrivalSession(Transport& transport, const WindowLayout& layout, bool verbose);

  // --- caller threads
  // Numbers the collective calls made on the communicator (estimates are
  // tagged with the call they are for); returns this call's number.
  std::uint64_t count_call() { return calls_.fetch_add(1); }
  std::uint64_t next_call() const { return calls_.load(); }
  void phase_begin();
  // begin + elapsed / fraction in global microseconds. Throws earlybird::Error
  // (f outside (0, 1], NaN, no phase_begin) naming `rank`.
  std::int64_t estimate(double fraction) const;
  void phase_end();
  // The binding of one arrival-ordered operation (a batch of call `call`);
  // `balanced`: what auto_pap runs where arrival order buys nothing (a
  // catalogue name: static storage).
  std::unique_ptr<Binding> binding(const coll::Algorithm& requested, std::uint64_t call, std::int64_t arrival_us,
                                   std::size_t bytes, std::string_view balanced, PlanFor plan_for);
  std::optional<StragglerReport> straggler_report() const;
  std::optional<ArrivalDecision> last_decision() const;

  // --- the communicator's drive holder (the progress thread, or a caller:
  //     exec/driver.hpp)
  void publish_estimate(std::uint64_t call, std::int64_t estimate_us) { board_.publish_estimate(call, estimate_us); }
  // One 8-byte atomic write (a message that does not wait for an answer) into
  // the header of every rank the last arrival-ordered collective wrote to and
  // of every rank coll::common_peers names.
  void warm_up();
  // This rank entered collective `sequence` (a local store: straggler reports).
  void entered(std::uint64_t sequence);
  void allreduce_took(std::size_t bytes, double us) { history_.record(bytes, us); }
  // The peers that have not entered `sequence` yet (one read of each
  // peer's entered word), ascending; a peer whose read fails (it closed, or
  // does not answer within the transport's wait limit) is left out.
  std::vector<int> not_entered(std::uint64_t sequence);
  // Records not_entered(sequence) as the straggler report.
  void report_stragglers(std::uint64_t sequence, const std::string& collective, std::chrono::milliseconds waited);

  // --- for the bindings (drive holder)
  ArrivalBoard& board() { return board_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  int node_ranks() const { return transport_->node_ranks(); }  // Transport::node_ranks
  bool verbose() const { return verbose_; }
  std::uint64_t next_epoch() { return next_epoch_++; }
  void bound_and_finished(std::vector<int> peers_written, ArrivalDecision decision);

 private:
  Transport* transport_;
  ArrivalBoard board_;
  int rank_;
  int size_;
  bool verbose_;
  std::atomic<std::uint64_t> calls_{0};
  AllreduceHistory history_;

  mutable std::mutex mutex_;  // guards the members below
  std::optional<std::chrono::steady_clock::time_point> phase_begin_;
  std::optional<StragglerReport> straggler_;
  std::optional<ArrivalDecision> last_decision_;

  // Drive holder only.
  std::uint64_t next_epoch_ = 0;  // arrival epochs started
  std::vector<int> warm_peers_;   // whom the last arrival-ordered operation wrote to
};

}  // namespace earlybird::pap
