// Pre-steps, first senders and last reducers of the pre-reduced ring (pap.hpp
// states the definitions; pre_reduced_ring.cpp builds the schedule).
#include <earlybird/collectives/pap.hpp>

#include <cmath>
#include <cstddef>
#include <stdexcept>

namespace earlybird::coll {
namespace {

void check_arrivals(std::span<const double> arrivals, double tau) {
  if (arrivals.empty()) throw std::invalid_argument("prr_presteps: no arrival times");
  if (std::isnan(tau) || tau <= 0) throw std::invalid_argument("prr_presteps: tau must be > 0");
  for (std::size_t i = 0; i < arrivals.size(); ++i) {
    if (std::isnan(arrivals[i]))
      throw std::invalid_argument("prr_presteps: arrival " + std::to_string(i) + " is NaN");
    if (i > 0 && arrivals[i] < arrivals[i - 1])
      throw std::invalid_argument("prr_presteps: arrivals are not sorted (arrival " + std::to_string(i) +
                                  " is earlier than arrival " + std::to_string(i - 1) + ")");
  }
}

void require_valid(std::span<const std::uint32_t> k, const char* who) {
  const std::string problem = presteps_problem(k, static_cast<int>(k.size()));
  if (!problem.empty()) throw std::invalid_argument(std::string(who) + ": " + problem);
}

}  // namespace

std::vector<std::uint32_t> prr_presteps(std::span<const double> sorted_arrivals, double tau) {
  check_arrivals(sorted_arrivals, tau);
  const std::size_t p = sorted_arrivals.size();
  const double last = sorted_arrivals[p - 1];
  std::vector<std::uint32_t> k(p, 0);
  for (std::size_t i = p - 1; i-- > 0;) {
    const std::uint32_t more = k[i + 1] + 1;
    k[i] = last - sorted_arrivals[i + 1] >= more * tau ? more : k[i + 1];
  }
  return k;
}

std::vector<std::uint32_t> presteps_last_late(int ranks) {
  if (ranks < 1) throw std::invalid_argument("presteps_last_late: ranks must be >= 1");
  std::vector<std::uint32_t> k(static_cast<std::size_t>(ranks), 0);
  for (int i = 0; i + 2 < ranks; ++i) k[static_cast<std::size_t>(i)] = static_cast<std::uint32_t>(ranks - 2 - i);
  return k;
}

std::vector<std::uint32_t> presteps_all_ahead(int ranks) {
  if (ranks < 1) throw std::invalid_argument("presteps_all_ahead: ranks must be >= 1");
  std::vector<std::uint32_t> k(static_cast<std::size_t>(ranks));
  for (int i = 0; i < ranks; ++i) k[static_cast<std::size_t>(i)] = static_cast<std::uint32_t>(ranks - 1 - i);
  return k;
}

std::string presteps_problem(std::span<const std::uint32_t> k, int ranks) {
  if (ranks < 1) return "ranks must be >= 1";
  if (k.size() != static_cast<std::size_t>(ranks))
    return "presteps has " + std::to_string(k.size()) + " entries, expected one per rank (" +
           std::to_string(ranks) + ")";
  if (k.back() != 0) return "presteps[" + std::to_string(k.size() - 1) + "] (the last rank) must be 0";
  for (std::size_t i = 0; i + 1 < k.size(); ++i)
    if (k[i] != k[i + 1] && k[i] != k[i + 1] + 1)
      return "presteps[" + std::to_string(i) + "] = " + std::to_string(k[i]) + " must be presteps[" +
             std::to_string(i + 1) + "] or one more (" + std::to_string(k[i + 1]) + " or " +
             std::to_string(k[i + 1] + 1) + ")";
  return {};
}

bool valid_presteps(std::span<const std::uint32_t> k) {
  return !k.empty() && presteps_problem(k, static_cast<int>(k.size())).empty();
}

std::vector<int> prr_first_senders(std::span<const std::uint32_t> k) {
  require_valid(k, "prr_first_senders");
  std::vector<int> first(k.size());
  std::size_t id = 0;
  for (std::size_t j = 0; j < k.size(); ++j) {
    while (id + k[id] < j) ++id;  // f(id) = id + k[id] climbs by 0 or 1 per rank up to P-1
    first[j] = static_cast<int>(id);
  }
  return first;
}

std::vector<int> prr_last_reducers(std::span<const std::uint32_t> k) {
  std::vector<int> last = prr_first_senders(k);
  const int p = static_cast<int>(k.size());
  for (int& rank : last) rank = (rank + p - 1) % p;
  return last;
}

}  // namespace earlybird::coll
