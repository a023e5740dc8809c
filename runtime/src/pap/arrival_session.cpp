#include "arrival_session.hpp"

#include "arrival_binding.hpp"
#include "global_clock.hpp"

#include <earlybird/collectives/peers.hpp>
#include <earlybird/error.hpp>

#include <algorithm>
#include <cstdio>

namespace earlybird::pap {

ArrivalSession::ArrivalSession(Transport& transport, const WindowLayout& layout, bool verbose)
    : transport_(&transport),
      board_(transport, layout),
      rank_(transport.rank()),
      size_(transport.size()),
      verbose_(verbose) {}

void ArrivalSession::phase_begin() {
  std::lock_guard lock(mutex_);
  phase_begin_ = SteadyClock::now();
}

void ArrivalSession::phase_end() {
  std::lock_guard lock(mutex_);
  phase_begin_.reset();
}

std::int64_t ArrivalSession::estimate(double fraction) const {
  const auto now = SteadyClock::now();
  const std::string where = "earlybird edge(" + std::to_string(fraction) + ") on rank " + std::to_string(rank_);
  if (!(fraction > 0.0 && fraction <= 1.0)) throw Error(where + ": the fraction must be in (0, 1]");
  SteadyClock::time_point begin;
  {
    std::lock_guard lock(mutex_);
    if (!phase_begin_) throw Error(where + ": no phase_begin() before it");
    begin = *phase_begin_;
  }
  const auto estimate = begin + std::chrono::duration_cast<SteadyClock::duration>((now - begin) / fraction);
  return global_us(*transport_, estimate);
}

std::unique_ptr<Binding> ArrivalSession::binding(const coll::Algorithm& requested, std::uint64_t call,
                                                 std::int64_t arrival_us, std::size_t bytes,
                                                 std::string_view balanced, PlanFor plan_for) {
  ArrivalBinding::Setup setup{&requested, call, arrival_us, timing_for(bytes, size_, history_.fastest_us(bytes)),
                              balanced, std::move(plan_for)};
  return std::make_unique<ArrivalBinding>(*this, std::move(setup));
}

void ArrivalSession::warm_up() {
  std::vector<int> peers = coll::common_peers(rank_, size_);
  for (int peer : warm_peers_)
    if (peer != rank_ && !std::binary_search(peers.begin(), peers.end(), peer)) peers.push_back(peer);
  const std::uint64_t value = 1;
  for (int peer : peers) transport_->notify(peer, WindowLayout::kWarmUpWordOffset, value);
}

void ArrivalSession::entered(std::uint64_t sequence) {
  transport_->store_local(WindowLayout::kEnteredWordOffset, sequence);
}

std::vector<int> ArrivalSession::not_entered(std::uint64_t sequence) {
  std::vector<int> absent;
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    try {
      if (transport_->load_remote(r, WindowLayout::kEnteredWordOffset) < sequence) absent.push_back(r);
    } catch (const std::exception&) {
      // Unknown (it closed or does not answer): not named.
    }
  }
  return absent;
}

void ArrivalSession::report_stragglers(std::uint64_t sequence, const std::string& collective,
                                       std::chrono::milliseconds waited) {
  StragglerReport report{collective, sequence, waited, not_entered(sequence)};
  if (verbose_) {
    std::string ranks;
    for (int r : report.not_arrived) ranks += " " + std::to_string(r);
    std::fprintf(stderr, "earlybird: straggler report: %s waited %lld ms; not arrived:%s\n", collective.c_str(),
                 static_cast<long long>(waited.count()), ranks.empty() ? " none" : ranks.c_str());
  }
  std::lock_guard lock(mutex_);
  straggler_ = std::move(report);
}

std::optional<StragglerReport> ArrivalSession::straggler_report() const {
  std::lock_guard lock(mutex_);
  return straggler_;
}

void ArrivalSession::bound_and_finished(std::vector<int> peers_written, ArrivalDecision decision) {
  warm_peers_ = std::move(peers_written);
  std::lock_guard lock(mutex_);
  last_decision_ = std::move(decision);
}

std::optional<ArrivalDecision> ArrivalSession::last_decision() const {
  std::lock_guard lock(mutex_);
  return last_decision_;
}

}  // namespace earlybird::pap
