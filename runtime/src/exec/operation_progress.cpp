// What the drive's holder (exec/driver.hpp) does for an active Operation at each poll: run
// parked steps whose peers became known and free, look at the flags still
// awaited, ask the binding for a decision still pending, and fail the
// operation when nothing arrived for the watchdog's timeout, naming whom it
// still waits for. (Split from operation.cpp, which dispatches and runs steps.)
#include "operation.hpp"

#include <earlybird/error.hpp>

#include <algorithm>

namespace earlybird {

using coll::PlanStep;
using coll::StepKind;

// Whether the rank at `virtual_rank` is known; otherwise asks the binding to
// learn more (at most once per poll).
bool Operation::known(int virtual_rank) {
  if (real_rank(virtual_rank) >= 0) return true;
  if (refreshed_this_poll_) return false;
  refreshed_this_poll_ = true;
  try {
    binding_->refresh();
  } catch (const std::exception& e) {
    fail(std::string("arrival entry failed: ") + e.what());
    return false;
  }
  return real_rank(virtual_rank) >= 0;
}

std::string Operation::name_of(int virtual_rank) const {
  const int rank = real_rank(virtual_rank);
  if (rank >= 0) return "rank " + std::to_string(rank);
  return "the rank arriving in position " + std::to_string(virtual_rank) + " (not arrived yet)";
}

// Every peer this step reaches (its transfer's peer, the targets of its
// notifications) must be bound to a rank, and the ones it writes must be free
// for this sequence number; asks the ones that are not known to be.
bool Operation::targets_ready(const PlanStep& s, bool check_data_target) {
  bool free = true;
  auto check = [&](int virtual_peer) {
    if (!known(virtual_peer)) {
      free = false;
      return;
    }
    free = ctx_.lanes->make_free(real_rank(virtual_peer), sequence_, lane_.distance) && free;
  };
  if (check_data_target && s.kind == StepKind::put) check(s.peer);
  if (check_data_target && s.kind == StepKind::get && !known(s.peer)) free = false;
  for (std::uint32_t n = s.note_begin; n < s.note_end; ++n) check(plan_->notes[n].target);
  return free;
}

bool Operation::retry_parked() {
  if (parked_.empty()) return false;
  std::vector<Parked> waiting;
  waiting.swap(parked_);
  for (const Parked& p : waiting) {
    if (p.phase == Phase::execute)
      dispatch(p.step);
    else
      finish_step(p.step);
  }
  return parked_.size() < waiting.size();
}

bool Operation::poll() {
  if (failure_.failed()) return false;
  refreshed_this_poll_ = false;
  if (!waits_) return poll_decision();
  bool progressed = retry_parked();
  for (std::size_t i = 0; i < unseen_flags_.size();) {
    const std::size_t before = unseen_flags_.size();
    check_flag(i, progressed);
    if (unseen_flags_.size() == before) ++i;  // not arrived: look at the next
    if (failure_.failed()) return true;
  }
  progressed |= settle_sends();
  if (progressed) {
    watchdog_.progressed();
  } else {
    ctx_.transport->poll_hook();
    watch();
  }
  return progressed;
}

// Fails the operation when no flag arrived for the timeout (watchdog.hpp).
void Operation::watch() {
  if (watchdog_.idle_poll_expired() && !finished())
    time_out("watchdog: no notification arrived for " + watchdog_.timeout_text() + "; " + missing_flags());
}

void Operation::check_flag(std::size_t index, bool& progressed) {
  const std::uint32_t flag = unseen_flags_[index];
  const std::uint64_t value = ctx_.transport->load_flag(ctx_.layout.flag_offset(lane_.index, flag));
  const std::uint64_t seen_sequence = value >> kSignatureBits;
  if (seen_sequence < sequence_) return;
  if (seen_sequence > sequence_ || (value & kSignatureMask) != signature_) {
    fail(different_collective(name_of(plan_->flag_source[flag])));
    return;
  }
  unseen_flags_[index] = unseen_flags_.back();
  unseen_flags_.pop_back();
  progressed = true;
  for (std::uint32_t i = plan_->release_begin[flag]; i < plan_->release_begin[flag + 1]; ++i)
    satisfy(plan_->release[i]);
}

void Operation::add_writers(std::vector<int>& ranks) const {
  const auto begin = static_cast<std::ptrdiff_t>(ranks.size());
  for (int source : plan_->flag_source) ranks.push_back(real_rank(source));
  std::sort(ranks.begin() + begin, ranks.end());
  ranks.erase(std::unique(ranks.begin() + begin, ranks.end()), ranks.end());
}

std::string Operation::missing_flags() const {
  std::vector<int> sources;
  for (std::uint32_t flag : unseen_flags_) sources.push_back(plan_->flag_source[flag]);
  std::sort(sources.begin(), sources.end());
  sources.erase(std::unique(sources.begin(), sources.end()), sources.end());
  if (sources.empty() && remaining_.load(std::memory_order_acquire) == 0)
    return "every step done, but MPI has not completed its messages to peers";
  if (sources.empty()) return "all peers' notifications arrived, local steps did not finish";
  std::vector<std::string> names;
  for (int v : sources) names.push_back(name_of(v));
  std::sort(names.begin(), names.end());
  std::string out = "still waiting for";
  for (std::size_t i = 0; i < names.size(); ++i) out += (i ? ", " : " ") + names[i];
  return out;
}

// The plan is not decided yet: asks the binding again; the watchdog covers a
// decision that never comes.
bool Operation::poll_decision() {
  try {
    if (binding_->refresh() && binding_->decided()) {
      run_decided_plan();
      return true;
    }
  } catch (const std::exception& e) {
    fail(std::string("arrival entry failed: ") + e.what());
    return true;
  }
  ctx_.transport->poll_hook();
  if (watchdog_.expired())
    time_out("watchdog: " + binding_->undecided_reason() + " within " + watchdog_.timeout_text());
  return false;
}

}  // namespace earlybird
