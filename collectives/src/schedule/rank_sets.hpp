// Internal to the verifier: immutable sets of virtual ranks (contribution
// sets), P bits each, shared by id.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace earlybird::coll::detail {

// Immutable sets of virtual ranks (P bits each), stored in blocks that never
// move and named by an id; every interval holding the same set shares its id.
using SetId = std::uint32_t;
// The id of no set: data nothing has written.
constexpr SetId kUndefined = ~SetId{0};

class RankSets {
 public:
  explicit RankSets(int ranks)
      : ranks_(ranks), words_per_set_((static_cast<std::size_t>(ranks) + 63) / 64) {
    for (int r = 0; r < ranks; ++r) {
      const SetId id = allocate();
      words(id)[static_cast<std::size_t>(r) / 64] |= std::uint64_t{1} << (r % 64);
    }
  }

  // {rank}: made up front, so its id is the rank.
  static SetId single(int rank) { return static_cast<SetId>(rank); }

  SetId unite(SetId a, SetId b) {
    const SetId id = allocate();
    std::uint64_t* out = words(id);
    const std::uint64_t* x = words(a);
    const std::uint64_t* y = words(b);
    for (std::size_t i = 0; i < words_per_set_; ++i) out[i] = x[i] | y[i];
    return id;
  }

  // Lowest rank in both sets; -1 when they are disjoint.
  int first_common(SetId a, SetId b) const {
    const std::uint64_t* x = words(a);
    const std::uint64_t* y = words(b);
    for (std::size_t i = 0; i < words_per_set_; ++i)
      if (const std::uint64_t both = x[i] & y[i]) return lowest_rank(i, both);
    return -1;
  }

  // Lowest rank missing from the set; -1 when it holds every rank.
  int first_missing(SetId id) const {
    const std::uint64_t* x = words(id);
    for (std::size_t i = 0; i < words_per_set_; ++i) {
      const int missing = lowest_rank(i, ~x[i]);
      if (missing >= 0 && missing < ranks_) return missing;
    }
    return -1;
  }

  // Number of ranks in the set.
  int size(SetId id) const {
    const std::uint64_t* x = words(id);
    int total = 0;
    for (std::size_t i = 0; i < words_per_set_; ++i) total += std::popcount(x[i]);
    return total;
  }

  // Lowest and highest rank of a non-empty set.
  int lowest(SetId id) const {
    const std::uint64_t* x = words(id);
    for (std::size_t i = 0; i < words_per_set_; ++i)
      if (x[i]) return lowest_rank(i, x[i]);
    return -1;
  }
  int highest(SetId id) const {
    const std::uint64_t* x = words(id);
    for (std::size_t i = words_per_set_; i-- > 0;)
      if (x[i]) return static_cast<int>(i * 64 + 63 - static_cast<std::size_t>(std::countl_zero(x[i])));
    return -1;
  }

  // True when the set is the run of ranks lowest..highest with no gap.
  bool is_interval(SetId id) const { return size(id) == highest(id) - lowest(id) + 1; }

  bool contains(SetId id, int rank) const {
    const auto r = static_cast<std::size_t>(rank);
    return (words(id)[r / 64] >> (r % 64)) & 1;
  }

  // "{0-3,7}", shortened after a few runs.
  std::string describe(SetId id) const {
    std::string out = "{";
    int runs = 0;
    for (int r = 0; r < ranks_; ++r) {
      if (!contains(id, r)) continue;
      int last = r;
      while (last + 1 < ranks_ && contains(id, last + 1)) ++last;
      if (++runs > 8) return out + ",...}";
      if (runs > 1) out += ",";
      out += std::to_string(r);
      if (last > r) out += "-" + std::to_string(last);
      r = last;
    }
    return out + "}";
  }

 private:
  static constexpr std::size_t kSetsPerBlock = 4096;

  static int lowest_rank(std::size_t word, std::uint64_t bits) {
    return bits ? static_cast<int>(word * 64 + static_cast<std::size_t>(std::countr_zero(bits))) : -1;
  }
  SetId allocate() {
    if (size_ == kUndefined) throw std::length_error("verify: too many contribution sets");
    if (size_ % kSetsPerBlock == 0)
      blocks_.push_back(std::make_unique<std::uint64_t[]>(kSetsPerBlock * words_per_set_));
    return size_++;
  }
  std::uint64_t* words(SetId id) {
    return blocks_[id / kSetsPerBlock].get() + (id % kSetsPerBlock) * words_per_set_;
  }
  const std::uint64_t* words(SetId id) const {
    return blocks_[id / kSetsPerBlock].get() + (id % kSetsPerBlock) * words_per_set_;
  }

  int ranks_;
  std::size_t words_per_set_;
  SetId size_ = 0;
  std::vector<std::unique_ptr<std::uint64_t[]>> blocks_;
};

}  // namespace earlybird::coll::detail
