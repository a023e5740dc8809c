// Checks chunk, max_chunk, segments, floor_pow2 and ceil_log2, edge cases included.
#include <earlybird/collectives/partition.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <vector>

using namespace earlybird::coll;

namespace {

std::vector<Range> all_chunks(std::size_t count, int parts) {
  std::vector<Range> out;
  for (int i = 0; i < parts; ++i) out.push_back(chunk(count, parts, i));
  return out;
}

}  // namespace

TEST_CASE("chunks of an uneven count: the first count % parts get one more element") {
  const std::vector<Range> expected{{0, 4}, {4, 3}, {7, 3}};
  CHECK(all_chunks(10, 3) == expected);
  CHECK(max_chunk(10, 3) == 4);
}

TEST_CASE("chunks of an even count are equal") {
  for (const Range& r : all_chunks(12, 4)) CHECK(r.count == 3);
  CHECK(max_chunk(12, 4) == 3);
}

TEST_CASE("count 0: every chunk is empty") {
  for (const Range& r : all_chunks(0, 5)) {
    CHECK(r.empty());
    CHECK(r.begin == 0);
  }
  CHECK(max_chunk(0, 5) == 0);
}

TEST_CASE("count smaller than parts: one element each, then empty chunks at the end") {
  const std::vector<Range> expected{{0, 1}, {1, 1}, {2, 1}, {3, 0}, {3, 0}};
  CHECK(all_chunks(3, 5) == expected);
  CHECK(max_chunk(3, 5) == 1);
}

TEST_CASE("one part is the whole vector") {
  CHECK(chunk(7, 1, 0) == Range{0, 7});
  CHECK(max_chunk(7, 1) == 7);
}

TEST_CASE("chunks tile [0, count) and differ by at most one element") {
  for (std::size_t count : {0u, 1u, 2u, 5u, 63u, 64u, 65u, 1000u, 10007u}) {
    for (int parts : {1, 2, 3, 7, 64, 100, 1024}) {
      CAPTURE(count);
      CAPTURE(parts);
      const auto chunks = all_chunks(count, parts);
      std::size_t next = 0, smallest = count, largest = 0;
      for (const Range& r : chunks) {
        CHECK(r.begin == next);
        next = r.end();
        smallest = std::min(smallest, r.count);
        largest = std::max(largest, r.count);
      }
      CHECK(next == count);
      CHECK(largest - smallest <= 1);
      CHECK(max_chunk(count, parts) == largest);
    }
  }
}

TEST_CASE("segments cut a range, the last one short") {
  const std::vector<Range> expected{{5, 3}, {8, 3}, {11, 3}, {14, 1}};
  CHECK(segments({5, 10}, 3) == expected);
}

TEST_CASE("segments: exact multiple, larger than the range, and 0 meaning one segment") {
  CHECK(segments({0, 6}, 3) == std::vector<Range>{{0, 3}, {3, 3}});
  CHECK(segments({2, 6}, 100) == std::vector<Range>{{2, 6}});
  CHECK(segments({2, 6}, 0) == std::vector<Range>{{2, 6}});
  CHECK(segments({4, 3}, 1) == std::vector<Range>{{4, 1}, {5, 1}, {6, 1}});
}

TEST_CASE("an empty range has no segments") {
  CHECK(segments({7, 0}, 3).empty());
  CHECK(segments({0, 0}, 0).empty());
}

TEST_CASE("floor_pow2") {
  CHECK(floor_pow2(1) == 1);
  CHECK(floor_pow2(2) == 2);
  CHECK(floor_pow2(3) == 2);
  CHECK(floor_pow2(4) == 4);
  CHECK(floor_pow2(7) == 4);
  CHECK(floor_pow2(127) == 64);
  CHECK(floor_pow2(128) == 128);
  CHECK(floor_pow2(1000) == 512);
  CHECK(floor_pow2(1024) == 1024);
}

TEST_CASE("ceil_log2") {
  CHECK(ceil_log2(1) == 0);
  CHECK(ceil_log2(2) == 1);
  CHECK(ceil_log2(3) == 2);
  CHECK(ceil_log2(4) == 2);
  CHECK(ceil_log2(5) == 3);
  CHECK(ceil_log2(127) == 7);
  CHECK(ceil_log2(128) == 7);
  CHECK(ceil_log2(129) == 8);
  CHECK(ceil_log2(1024) == 10);
  CHECK(ceil_log2(1025) == 11);
}
