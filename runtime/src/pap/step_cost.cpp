#include "step_cost.hpp"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace earlybird::pap {
namespace {

constexpr std::size_t kProbeBytes = 1u << 20;
constexpr int kProbeRounds = 3;

template <class Work>
double best_us_per_byte(Work work) {
  double best = 1e30;
  for (int round = 0; round < kProbeRounds; ++round) {
    const auto begin = std::chrono::steady_clock::now();
    work();
    const std::chrono::duration<double, std::micro> took = std::chrono::steady_clock::now() - begin;
    best = std::min(best, took.count());
  }
  return best / static_cast<double>(kProbeBytes);
}

LinkCosts measure() {
  std::vector<float> a(kProbeBytes / sizeof(float), 1.0f), b(a.size(), 2.0f);
  LinkCosts costs;
  costs.beta_us_per_byte = best_us_per_byte([&] { std::memcpy(b.data(), a.data(), kProbeBytes); });
  costs.gamma_us_per_byte = best_us_per_byte([&] {
    for (std::size_t i = 0; i < a.size(); ++i) b[i] += a[i];
  });
  // Keep the sum observable so it is not optimised away.
  if (b[0] == 0.0f) costs.gamma_us_per_byte += 0.0;
  return costs;
}

double fixed_tau_us() {
  const char* text = std::getenv("EARLYBIRD_PAP_TAU_US");
  if (!text || !*text) return 0;
  return std::max(0.0, std::strtod(text, nullptr));
}

}  // namespace

const LinkCosts& measured_link_costs() {
  static const LinkCosts costs = measure();
  return costs;
}

Timing timing_for(std::size_t bytes, int ranks, std::optional<double> fastest_allreduce_us) {
  Timing t;
  const double ring_steps = 2.0 * static_cast<double>(std::max(ranks - 1, 1));
  const double fixed = fixed_tau_us();
  if (fixed > 0) {
    t.tau_us = fixed;
  } else {
    const LinkCosts& c = measured_link_costs();
    const double chunk = static_cast<double>(bytes) / static_cast<double>(std::max(ranks, 1));
    t.tau_us = c.alpha_us + chunk * (c.beta_us_per_byte + c.gamma_us_per_byte);
    if (fastest_allreduce_us) t.tau_us = std::max(t.tau_us, *fastest_allreduce_us / ring_steps);
  }
  t.ring_us = ring_steps * t.tau_us;
  return t;
}

void AllreduceHistory::record(std::size_t bytes, double us) {
  std::lock_guard lock(mutex_);
  auto [it, fresh] = fastest_.try_emplace(std::bit_width(bytes), us);
  if (!fresh) it->second = std::min(it->second, us);
}

std::optional<double> AllreduceHistory::fastest_us(std::size_t bytes) const {
  std::lock_guard lock(mutex_);
  auto it = fastest_.find(std::bit_width(bytes));
  if (it == fastest_.end()) return std::nullopt;
  return it->second;
}

}  // namespace earlybird::pap
