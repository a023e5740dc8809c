// PlanCache: a communicator's rank plans, built once per key (collective,
// algorithm, parameters, count, this rank's virtual rank) and reused, and the
// batch sizing that keeps each batch's plan within one window lane.
// Thread-safe: callers plan on their own threads, arrival bindings on the
// progress thread. A plan is a function of the key and the communicator's
// shape (P, ranks per node, window layout) alone, so the communicators of a
// process that have one shape share one cache (for_shape): a split or dup of
// the world finds the world's plans built.
#pragma once

#include "../rma/window_layout.hpp"

#include <earlybird/collectives/catalogue.hpp>
#include <earlybird/collectives/plan.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace earlybird::detail {

class PlanCache {
 public:
  struct Key {
    coll::Collective collective;
    std::string algorithm;
    std::size_t count;
    std::size_t segment_elems;
    int fanout;
    int virtual_rank;
    std::size_t elem_bytes;
    std::vector<std::uint32_t> presteps;  // pre_reduced_ring's k
    auto operator<=>(const Key&) const = default;
  };

  // node_ranks: Transport::node_ranks, passed to every generator
  // (AlgorithmParams::node_ranks).
  PlanCache(int ranks, int node_ranks, const WindowLayout& layout)
      : ranks_(ranks), node_ranks_(node_ranks), layout_(layout) {}
  // The cache every live communicator of this shape in the process uses (a
  // new one when none lives).
  static std::shared_ptr<PlanCache> for_shape(int ranks, int node_ranks, const WindowLayout& layout);

  // Thread-safe; builds the plan unless cached (slow for many segments).
  std::shared_ptr<const coll::RankPlan> plan(const Key& key);
  bool has(const Key& key);
  // Whether the plan's scratch and flags fit one lane of the window.
  bool fits(const coll::RankPlan& plan, std::size_t elem_bytes) const;
  // How many batches `key`'s call needs so that each batch fits one lane.
  // Deterministic, so all ranks agree. Throws when no batching helps.
  std::size_t batch_count(Key key);
  // The batches of an arrival-ordered call: enough for whichever algorithm
  // its decision may pick (the ring, `balanced` — auto_pap's static choice
  // — and every arrival-ordered entry).
  std::size_t arrival_batch_count(Key key, std::string_view balanced);

 private:
  int ranks_;
  int node_ranks_;
  WindowLayout layout_;
  std::mutex mutex_;
  std::map<Key, std::shared_ptr<const coll::RankPlan>> plans_;
};

}  // namespace earlybird::detail
