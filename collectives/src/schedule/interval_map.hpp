// Internal to the verifier: a map from element intervals of one buffer to values.
#pragma once

#include <earlybird/collectives/schedule.hpp>

#include <algorithm>
#include <cstddef>
#include <limits>
#include <utility>
#include <vector>

namespace earlybird::coll::detail {

// Disjoint intervals covering [0, inf) of one buffer, each with a Value,
// split lazily at the boundaries of the ranges written. A sorted vector rather
// than a tree: lookups touch few cache lines, and the slots of a schedule are
// mostly first written in increasing order, so inserts land near the end.
template <class Value>
class IntervalMap {
 public:
  IntervalMap() { intervals_.push_back({0, Value{}}); }

  // Calls visit(piece, value) for every interval of `range`, in order,
  // without splitting (pieces are clipped to the range).
  template <class Visit>
  void visit(Range range, Visit&& visit) const {
    if (range.empty()) return;
    for (std::size_t i = find(range.begin); i < intervals_.size() && intervals_[i].begin < range.end(); ++i) {
      const std::size_t begin = std::max(intervals_[i].begin, range.begin);
      visit(Range{begin, std::min(end_of(i), range.end()) - begin}, intervals_[i].value);
    }
  }

  // Calls visit(piece, value) for every interval of `range`, in order, after
  // splitting intervals at the range's ends, so the visitor may change them.
  template <class Visit>
  void for_each(Range range, Visit&& visit) {
    if (range.empty()) return;
    for (std::size_t i = split(range.begin);; ++i) {
      if (end_of(i) > range.end()) insert_after(i, range.end());
      visit(Range{intervals_[i].begin, end_of(i) - intervals_[i].begin}, intervals_[i].value);
      if (end_of(i) == range.end()) return;
    }
  }

  void split_at(std::size_t at) { split(at); }

 private:
  struct Interval {
    std::size_t begin;
    Value value;
  };

  // Index of the interval holding element `at`.
  std::size_t find(std::size_t at) const {
    const auto it = std::upper_bound(intervals_.begin(), intervals_.end(), at,
                                     [](std::size_t a, const Interval& in) { return a < in.begin; });
    return static_cast<std::size_t>(it - intervals_.begin()) - 1;
  }
  // Index of the interval that begins at `at`, splitting one if needed.
  std::size_t split(std::size_t at) {
    const std::size_t i = find(at);
    if (intervals_[i].begin == at) return i;
    insert_after(i, at);
    return i + 1;
  }
  void insert_after(std::size_t i, std::size_t at) {
    Value copy = intervals_[i].value;
    intervals_.insert(intervals_.begin() + static_cast<std::ptrdiff_t>(i + 1), Interval{at, std::move(copy)});
  }
  std::size_t end_of(std::size_t i) const {
    return i + 1 < intervals_.size() ? intervals_[i + 1].begin : std::numeric_limits<std::size_t>::max();
  }

  std::vector<Interval> intervals_;
};

}  // namespace earlybird::coll::detail
