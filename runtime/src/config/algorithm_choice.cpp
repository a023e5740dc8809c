#include "algorithm_choice.hpp"

#include <earlybird/error.hpp>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <tuple>
#include <vector>

namespace earlybird::config {
namespace {

using coll::Collective;

// The model's choice depends on these only, so every rank of a communicator
// reaches the same one whatever it decided before.
struct ChoiceKey {
  Collective collective;
  int ranks;            // min(P, kModelRanks)
  std::size_t bytes;    // the size class's upper bound: a power of two
  bool commutative;
  bool direct;
  int node_ranks;       // of the model's ranks: 0, or a divisor below them
  int shared_cores;     // 0, or the cores an oversubscribed node's ranks share
  bool reads_peers;     // the peer_reads entries are candidates
  bool peers_mapped;    // ... loading from the peers' shared arenas (DirectPaths::peers_mapped)
  bool fits_inline;     // the inline_flags entries are candidates: `bytes` is then at most what fits
  auto operator<=>(const ChoiceKey&) const = default;
};

// The model simulates a size class as floats, classes under 4 bytes as one
// element of their size.
constexpr std::size_t kModelElemBytes = 4;
std::size_t model_elem_bytes(std::size_t bytes) { return std::min(bytes, kModelElemBytes); }

std::string level_of(const ChoiceKey& key) {
  if (key.node_ranks > 0) return "nodes of " + std::to_string(key.node_ranks) + " ranks";
  if (key.shared_cores > 0) return "node level, " + std::to_string(key.shared_cores) + " cores shared";
  return key.direct ? "node level" : "network level";
}

// The level's costs for `key`: two levels across nodes; on an oversubscribed
// node its ranks share key.shared_cores CPUs (coll::CostModel::cores).
coll::LevelCosts costs_for(const ChoiceKey& key, const coll::MachineProfile& profile) {
  if (key.node_ranks > 0) return coll::spanning_nodes(profile, key.node_ranks);
  if (!key.direct) return profile.network;
  coll::LevelCosts node = profile.node;
  node.model.cores = key.shared_cores;
  return node;
}

std::string explain(const ChoiceKey& key, const std::vector<coll::Prediction>& ranked, const std::string& source) {
  char line[200];
  std::snprintf(line, sizeof line, "earlybird: auto for %s, P = %d%s, up to %zu B, %scommutative (%s, profile: ",
                coll::to_string(key.collective), key.ranks, key.ranks == kModelRanks ? "+" : "", key.bytes,
                key.commutative ? "" : "non-", level_of(key).c_str());
  std::string text = line + source + "): ";
  for (std::size_t i = 0; i < ranked.size() && i < 4; ++i) {
    std::snprintf(line, sizeof line, "%s%s %.1f us", i ? ", " : "", std::string(ranked[i].algorithm).c_str(),
                  ranked[i].seconds * 1e6);
    text += line;
    if (ranked[i].segment_bytes) text += " (segments of " + std::to_string(ranked[i].segment_bytes) + " B)";
  }
  return text + "\n";
}

// A class's ranking, and whether a caller asking for the explanation got it
// (decide_ahead() ranks classes nobody asked about yet).
struct Ranked {
  std::vector<coll::Prediction> predictions;
  bool explained = false;
};

std::atomic<std::size_t> classes_ranked{0};

// The model's ranking for `key`, cached for the process. Ranked outside the
// lock (a class can take milliseconds at P = 64, and decide_ahead() ranks
// many at once); the model is a pure function, so a class two threads rank
// at once comes out the same.
const std::vector<coll::Prediction>& ranking(const ChoiceKey& key, std::string* explanation) {
  static std::mutex mutex;
  static std::map<ChoiceKey, Ranked> cache;
  const coll::MachineProfile& profile = machine_profile();
  auto explained = [&](Ranked& entry) -> const std::vector<coll::Prediction>& {
    if (explanation && !entry.explained) {
      *explanation = explain(key, entry.predictions, profile.source);
      entry.explained = true;
    }
    return entry.predictions;
  };
  {
    std::lock_guard lock(mutex);
    if (auto found = cache.find(key); found != cache.end()) return explained(found->second);
  }
  const std::size_t elem_bytes = model_elem_bytes(key.bytes);
  auto ranked = coll::predict_all(key.collective, key.ranks, key.bytes / elem_bytes, elem_bytes, key.commutative,
                                  costs_for(key, profile),
                                  {key.fits_inline, key.reads_peers, key.peers_mapped});
  classes_ranked.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard lock(mutex);
  return explained(cache.try_emplace(key, Ranked{std::move(ranked)}).first->second);
}

// Any algorithm of `collective` that suits the operator (one rank, no data:
// nothing to compare).
std::string first_suitable(Collective collective, bool commutative) {
  for (const auto& a : coll::algorithms(collective))
    if (a.arrival == coll::ArrivalOrder::none && a.executor == coll::Executor::steps && (commutative || !a.needs_commutative))
      return std::string(a.name);
  return "";
}

}  // namespace

bool profile_named_by_environment() {
  const char* path = std::getenv("EARLYBIRD_PROFILE");
  return path && *path;
}

namespace {

// The process's profile: set once, never changed.
struct ChosenProfile {
  std::mutex mutex;
  std::optional<coll::MachineProfile> profile;
};

ChosenProfile& chosen() {
  static ChosenProfile chosen;
  return chosen;
}

coll::MachineProfile profile_from_environment_or_defaults() {
  if (!profile_named_by_environment()) return coll::default_profile();
  try {
    return coll::read_profile(std::getenv("EARLYBIRD_PROFILE"));
  } catch (const std::invalid_argument& e) {
    throw Error(std::string("earlybird: EARLYBIRD_PROFILE: ") + e.what());
  }
}

}  // namespace

bool use_probed_profile(const coll::MachineProfile& probed) {
  ChosenProfile& c = chosen();
  std::lock_guard lock(c.mutex);
  if (c.profile || profile_named_by_environment()) return false;
  c.profile = probed;
  return true;
}

const coll::MachineProfile& machine_profile() {
  ChosenProfile& c = chosen();
  std::lock_guard lock(c.mutex);
  if (!c.profile) c.profile = profile_from_environment_or_defaults();
  return *c.profile;
}

namespace {

// The class a call of these arguments belongs to (default_algorithm).
ChoiceKey key_for(Collective collective, std::size_t bytes, int ranks, bool commutative, bool direct, int node_ranks,
                  int shared_cores, bool reads_peers, bool peers_mapped = false) {
  const int model_ranks = std::min(ranks, kModelRanks);
  const bool nodes_fit = node_ranks > 0 && node_ranks < model_ranks && model_ranks % node_ranks == 0;
  // The model's ranks stand for the communicator's: they share the cores
  // the communicator's ranks share, in proportion.
  const int model_cores = shared_cores > 0 ? std::max(1, shared_cores * model_ranks / ranks) : 0;
  // A call that fits the inline lines is its own class, up to the most that
  // fits (a class's upper bound may not).
  const bool fits_inline = direct && bytes <= coll::inline_limit(collective, ranks);
  const std::size_t class_bytes =
      fits_inline ? std::min(std::bit_ceil(bytes), coll::inline_limit(collective, model_ranks)) : std::bit_ceil(bytes);
  return ChoiceKey{collective,  model_ranks, class_bytes, commutative, direct, nodes_fit ? node_ranks : 0,
                   direct ? model_cores : 0, direct && reads_peers, direct && reads_peers && peers_mapped,
                   fits_inline};
}

Choice choice_of(const coll::Prediction& prediction) {
  return {std::string(prediction.algorithm), prediction.segment_bytes};
}

}  // namespace

Choice default_algorithm(Collective collective, std::size_t bytes, int ranks, bool commutative, bool direct,
                         int node_ranks, std::string* explanation, int shared_cores, bool reads_peers,
                         bool peers_mapped) {
  if (ranks <= 1 || bytes == 0) return {first_suitable(collective, commutative)};
  const auto& ranked = ranking(
      key_for(collective, bytes, ranks, commutative, direct, node_ranks, shared_cores, reads_peers, peers_mapped),
      explanation);
  if (ranked.empty()) return {};
  return choice_of(ranked.front());
}

SizeClass size_class(Collective collective, std::size_t bytes, int ranks, bool commutative, bool direct,
                     bool peers_mapped) {
  const ChoiceKey key = key_for(collective, bytes, ranks, commutative, direct, 0, 0, direct, peers_mapped);
  return {collective, key.bytes, commutative, key.fits_inline, key.peers_mapped};
}

std::vector<coll::Prediction> ranked_algorithms(Collective collective, std::size_t bytes, int ranks, bool commutative,
                                                bool direct, int node_ranks, int shared_cores, bool reads_peers,
                                                bool peers_mapped) {
  if (ranks <= 1 || bytes == 0) return {};
  return ranking(
      key_for(collective, bytes, ranks, commutative, direct, node_ranks, shared_cores, reads_peers, peers_mapped),
      nullptr);
}

std::optional<Choice> arrival_stand_in(const coll::Algorithm& arrival_chosen, Collective collective, std::size_t bytes,
                                       int ranks, bool commutative, bool direct, int node_ranks,
                                       std::string* explanation, int shared_cores, bool reads_peers,
                                       bool peers_mapped) {
  if (ranks <= 1 || bytes == 0) return std::nullopt;
  const ChoiceKey key =
      key_for(collective, bytes, ranks, commutative, direct, node_ranks, shared_cores, reads_peers, peers_mapped);
  const double board_s = coll::board_cost(arrival_chosen, costs_for(key, machine_profile()));
  const auto& ranked = ranking(key, nullptr);
  if (ranked.empty() || board_s <= 0 || ranked.front().seconds > board_s) return std::nullopt;
  if (explanation) {
    char line[240];
    std::snprintf(line, sizeof line,
                  "earlybird: arrival order for %s, P = %d, up to %zu B (%s): %s, predicted %.1f us, takes no longer "
                  "than the arrival board's %.1f us: it runs without the board\n",
                  coll::to_string(collective), ranks, key.bytes, level_of(key).c_str(),
                  std::string(ranked.front().algorithm).c_str(), ranked.front().seconds * 1e6, board_s * 1e6);
    *explanation = line;
  }
  return choice_of(ranked.front());
}

const coll::Algorithm& fastest_schedule(std::size_t bytes, int ranks, bool direct, int node_ranks, int shared_cores,
                                        bool reads_peers) {
  if (ranks > 1 && bytes > 0) {
    const ChoiceKey key =
        key_for(Collective::allreduce, bytes, ranks, true, direct, node_ranks, shared_cores, reads_peers);
    for (const coll::Prediction& p : ranking(key, nullptr)) {
      const coll::Algorithm* a = coll::find_algorithm(Collective::allreduce, p.algorithm);
      if (a && a->executor == coll::Executor::steps) return *a;
    }
  }
  return *coll::find_algorithm(Collective::allreduce, "ring");
}

std::size_t rankings_made() { return classes_ranked.load(std::memory_order_relaxed); }

void decide_ahead(int ranks, bool direct, int node_ranks, int shared_cores, bool reads_peers) {
  struct Class {
    Collective collective;
    std::size_t bytes;
    bool commutative;
  };
  std::vector<Class> classes;
  for (Collective collective : coll::kCollectives) {
    std::vector<std::size_t> sizes;
    for (std::size_t bytes = 1; bytes <= kDecidedAheadBytes; bytes *= 2) sizes.push_back(bytes);
    // The most that fits the inline lines, where that is a class of its own.
    if (const std::size_t most = coll::inline_limit(collective, ranks); direct && most > 0 && !std::has_single_bit(most))
      sizes.insert(std::lower_bound(sizes.begin(), sizes.end(), most), most);
    for (bool commutative : {true, false})
      for (std::size_t bytes : sizes)
        if (commutative || coll::reduces(collective)) classes.push_back({collective, bytes, commutative});
  }
  // Largest first: they take longest, and the threads then share out the rest.
  std::reverse(classes.begin(), classes.end());
  std::atomic<std::size_t> next{0};
  std::mutex failure_mutex;
  std::exception_ptr failure;
  auto decide = [&] {
    try {
      for (std::size_t i; (i = next.fetch_add(1)) < classes.size();) {
        const Class& c = classes[i];
        default_algorithm(c.collective, c.bytes, ranks, c.commutative, direct, node_ranks, nullptr, shared_cores,
                          reads_peers);
      }
    } catch (...) {
      std::lock_guard lock(failure_mutex);
      if (!failure) failure = std::current_exception();
      next = classes.size();
    }
  };
  // Threads that end with the work (not TBB's workers, which spin a while
  // after it: Communicator::warm_up's caller needs the CPU next).
  const unsigned helpers = std::clamp(std::thread::hardware_concurrency(), 1u, 8u) - 1;
  {
    std::vector<std::jthread> threads;
    try {
      for (unsigned t = 0; t < helpers; ++t) threads.emplace_back(decide);
    } catch (const std::system_error&) {  // no more threads: fewer share the work
    }
    decide();
  }
  if (failure) std::rethrow_exception(failure);
}

coll::OuterProductAlgorithm default_outer_product_algorithm(int ranks, std::size_t rows, std::size_t cols,
                                                            std::size_t elem_bytes, bool direct,
                                                            std::string* explanation) {
  using Key = std::tuple<int, std::size_t, std::size_t, std::size_t, bool>;
  static std::mutex mutex;
  static std::map<Key, coll::OuterProductAlgorithm> cache;
  const Key key{std::min(ranks, kModelRanks), rows, cols, elem_bytes, direct};
  std::lock_guard lock(mutex);
  if (auto found = cache.find(key); found != cache.end()) return found->second;
  const coll::MachineProfile& profile = machine_profile();
  const auto ranked = coll::predict_outer_products(std::get<0>(key), rows, cols, elem_bytes,
                                                   direct ? profile.node : profile.network);
  if (explanation) {
    char line[160];
    std::snprintf(line, sizeof line, "earlybird: auto for sum_outer_products, P = %d%s, %zu x %zu, %zu-byte elements (%s level): ",
                  std::get<0>(key), std::get<0>(key) == kModelRanks ? "+" : "", rows, cols, elem_bytes,
                  direct ? "node" : "network");
    *explanation = line;
    for (std::size_t i = 0; i < ranked.size(); ++i) {
      std::snprintf(line, sizeof line, "%s%s %.1f us", i ? ", " : "", std::string(coll::to_string(ranked[i].algorithm)).c_str(),
                    ranked[i].seconds * 1e6);
      *explanation += line;
    }
    *explanation += "\n";
  }
  return cache.emplace(key, ranked.front().algorithm).first->second;
}

}  // namespace earlybird::config
