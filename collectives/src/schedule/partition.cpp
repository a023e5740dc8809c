#include <earlybird/collectives/partition.hpp>

#include <algorithm>
#include <bit>

namespace earlybird::coll {

Range chunk(std::size_t count, int parts, int index) {
  const auto p = static_cast<std::size_t>(parts);
  const auto i = static_cast<std::size_t>(index);
  const std::size_t base = count / p;
  const std::size_t extra = count % p;
  return {i * base + std::min(i, extra), base + (i < extra ? 1 : 0)};
}

std::size_t max_chunk(std::size_t count, int parts) {
  const auto p = static_cast<std::size_t>(parts);
  return count / p + (count % p ? 1 : 0);
}

std::vector<Range> segments(Range range, std::size_t segment_elems) {
  std::vector<Range> out;
  if (range.empty()) return out;
  const std::size_t step = segment_elems == 0 ? range.count : segment_elems;
  for (std::size_t b = range.begin; b < range.end(); b += step)
    out.push_back({b, std::min(step, range.end() - b)});
  return out;
}

int floor_pow2(int p) { return static_cast<int>(std::bit_floor(static_cast<unsigned>(p))); }

int ceil_log2(int p) { return static_cast<int>(std::bit_width(static_cast<unsigned>(p - 1))); }

}  // namespace earlybird::coll
