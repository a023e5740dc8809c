// Internal to the builder and the verifier: a map from element intervals of
// one buffer to values.
#pragma once

#include <earlybird/collectives/schedule.hpp>

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <limits>
#include <map>
#include <type_traits>
#include <utility>
#include <vector>

namespace earlybird::coll::detail {

// How an IntervalMap stores its intervals. A sorted vector touches few
// cache lines and suits ranges that mostly arrive in increasing order (the
// verifier, whole schedules). A tree suits the builder of one rank's plan at
// large P: a ring's chunks are first written in decreasing order, and a
// vector would shift every later interval on each split (quadratic in P).
enum class IntervalStorage { sorted_vector, tree };

// Disjoint intervals covering [0, inf) of one buffer, each with a Value,
// split lazily at the boundaries of the ranges written.
template <class Value, IntervalStorage storage = IntervalStorage::sorted_vector>
class IntervalMap {
 public:
  // Empty until first split: one interval [0, inf) with Value{} (a builder
  // focused on a few of 16384 ranks never touches most of its maps).
  IntervalMap() = default;

  // Calls visit(piece, value) for every interval of `range`, in order,
  // without splitting (pieces are clipped to the range).
  template <class Visit>
  void visit(Range range, Visit&& visit) const {
    if (range.empty()) return;
    if (intervals_.empty()) {
      static const Value untouched{};
      visit(range, untouched);
      return;
    }
    for (auto it = find(range.begin); it != intervals_.end() && it->first < range.end(); ++it) {
      const std::size_t begin = std::max(it->first, range.begin);
      visit(Range{begin, std::min(end_of(it), range.end()) - begin}, it->second);
    }
  }

  // Calls visit(piece, value) for every interval of `range`, in order, after
  // splitting intervals at the range's ends, so the visitor may change them.
  template <class Visit>
  void for_each(Range range, Visit&& visit) {
    if (range.empty()) return;
    for (auto it = split(range.begin);; ++it) {
      if (end_of(it) > range.end()) it = std::prev(insert_after(it, range.end()));
      visit(Range{it->first, end_of(it) - it->first}, it->second);
      if (end_of(it) == range.end()) return;
    }
  }

  void split_at(std::size_t at) { split(at); }

 private:
  static constexpr bool kTree = storage == IntervalStorage::tree;
  // (first element, value), ordered by first element.
  using Intervals = std::conditional_t<kTree, std::map<std::size_t, Value>, std::vector<std::pair<std::size_t, Value>>>;
  using Iterator = typename Intervals::iterator;

  // The interval holding element `at`.
  template <class Self>
  static auto find_in(Self& intervals, std::size_t at) {
    if constexpr (kTree)
      return std::prev(intervals.upper_bound(at));
    else
      return std::prev(std::upper_bound(intervals.begin(), intervals.end(), at,
                                        [](std::size_t a, const auto& in) { return a < in.first; }));
  }
  auto find(std::size_t at) const { return find_in(intervals_, at); }
  Iterator find(std::size_t at) { return find_in(intervals_, at); }
  // The interval that begins at `at`, splitting one if needed.
  Iterator split(std::size_t at) {
    if (intervals_.empty()) intervals_.insert(intervals_.end(), {0, Value{}});
    const Iterator it = find(at);
    if (it->first == at) return it;
    return insert_after(it, at);
  }
  // Splits `it` at `at`; returns the new interval (a vector's iterators
  // before it are invalidated: callers take the new one's predecessor).
  Iterator insert_after(Iterator it, std::size_t at) {
    Value copy = it->second;
    if constexpr (kTree)
      return intervals_.emplace_hint(std::next(it), at, std::move(copy));
    else
      return intervals_.insert(std::next(it), {at, std::move(copy)});
  }
  template <class It>
  std::size_t end_of(It it) const {
    const auto next = std::next(it);
    return next != intervals_.end() ? next->first : std::numeric_limits<std::size_t>::max();
  }

  Intervals intervals_;
};

}  // namespace earlybird::coll::detail
