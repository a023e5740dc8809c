// Internal: a process-wide table of a pure function's results, for model
// computations that recur (simulations, SUARA's grids). The value is computed
// outside the lock, so two threads may both compute a missing key (same
// result); bounded: the table is emptied when it reaches `limit` entries
// (callers that try many models, such as calibration's fit).
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <utility>

namespace earlybird::coll::detail {

template <class Key, class Value>
class Remembered {
 public:
  explicit Remembered(std::size_t limit) : limit_(limit) {}

  template <class Compute>
  Value get(const Key& key, Compute&& compute) {
    {
      std::lock_guard lock(mutex_);
      if (auto found = values_.find(key); found != values_.end()) return found->second;
    }
    Value value = std::forward<Compute>(compute)();
    std::lock_guard lock(mutex_);
    if (values_.size() >= limit_) values_.clear();
    values_.emplace(key, value);
    return value;
  }

 private:
  std::size_t limit_;
  std::mutex mutex_;
  std::map<Key, Value> values_;
};

}  // namespace earlybird::coll::detail
