// shared_while_alive: one object per key for as long as anything holds it.
// The communicators of a process that have one shape share their caches
// this way (PlanCache::for_shape, CommCore's shared prepared shapes): a
// split or dup of the world finds what the world built, and the object goes
// with the last communicator that holds it.
#pragma once

#include <map>
#include <memory>
#include <mutex>

namespace earlybird {

namespace detail {
template <class T, class Key>
struct LiveObjects {
  static inline std::mutex mutex;
  static inline std::map<Key, std::weak_ptr<T>> live;
};
}  // namespace detail

// The live T for `key` (one registry per T and Key type), or a new one from
// make() when none lives. Thread-safe.
template <class T, class Key, class Make>
std::shared_ptr<T> shared_while_alive(const Key& key, Make make) {
  using Live = detail::LiveObjects<T, Key>;
  std::lock_guard lock(Live::mutex);
  std::erase_if(Live::live, [](const auto& entry) { return entry.second.expired(); });
  std::weak_ptr<T>& slot = Live::live[key];
  std::shared_ptr<T> object = slot.lock();
  if (!object) slot = object = make();
  return object;
}

}  // namespace earlybird
