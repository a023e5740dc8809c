// ReusedBuffers (runtime/src/base/reused_buffers.hpp): an in-place call's
// private copy holds the input's bytes, goes back to the pool when its last
// owner lets go, and the next copy that fits lands in the same memory; the
// pool keeps at most kKeptBuffers buffers and kKeptBytes bytes, and a copy
// outliving its pool's owner still frees cleanly.
#include <doctest/doctest.h>

#include "base/reused_buffers.hpp"

#include <cstddef>
#include <memory>
#include <numeric>
#include <vector>

using namespace earlybird;

namespace {

std::vector<std::byte> bytes(std::size_t n, int first) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>((first + static_cast<int>(i)) & 0xff);
  return v;
}

}  // namespace

TEST_CASE("a copy holds the input's bytes and its memory is reused by the next copy that fits") {
  auto pool = std::make_shared<ReusedBuffers>();
  const auto input = bytes(4096, 7);
  auto copy = pool->copy_of(input.data(), input.size());
  CHECK(*copy == input);
  CHECK(pool->kept() == 0);
  const std::byte* memory = copy->data();
  copy.reset();
  CHECK(pool->kept() == 1);

  const auto smaller = bytes(1000, 3);
  auto again = pool->copy_of(smaller.data(), smaller.size());
  CHECK(again->data() == memory);
  CHECK(*again == smaller);
  CHECK(pool->kept() == 0);
}

TEST_CASE("a copy larger than every free buffer grows the largest one") {
  auto pool = std::make_shared<ReusedBuffers>();
  const auto small = bytes(100, 1), large = bytes(1 << 20, 2);
  pool->copy_of(small.data(), small.size()).reset();
  auto copy = pool->copy_of(large.data(), large.size());
  CHECK(*copy == large);
  CHECK(pool->kept() == 0);
}

TEST_CASE("copies in flight at once are distinct buffers, and the pool keeps at most kKeptBuffers") {
  auto pool = std::make_shared<ReusedBuffers>();
  std::vector<std::shared_ptr<const std::vector<std::byte>>> copies;
  for (int i = 0; i < 6; ++i) {
    const auto input = bytes(256 + static_cast<std::size_t>(i), i);
    copies.push_back(pool->copy_of(input.data(), input.size()));
  }
  for (std::size_t i = 0; i < copies.size(); ++i) {
    CHECK(*copies[i] == bytes(256 + i, static_cast<int>(i)));
    for (std::size_t j = 0; j < i; ++j) CHECK(copies[i]->data() != copies[j]->data());
  }
  copies.clear();
  CHECK(pool->kept() == ReusedBuffers::kKeptBuffers);
}

TEST_CASE("a buffer beyond kKeptBytes is freed when taken back, the others kept") {
  auto pool = std::make_shared<ReusedBuffers>();
  const auto small = bytes(100, 1);
  auto kept = pool->copy_of(small.data(), small.size());
  std::vector<std::byte> huge(ReusedBuffers::kKeptBytes + 1);
  pool->copy_of(huge.data(), huge.size()).reset();
  CHECK(pool->kept() == 0);
  kept.reset();
  CHECK(pool->kept() == 1);
}

TEST_CASE("a copy outlives its pool's owner") {
  auto pool = std::make_shared<ReusedBuffers>();
  const auto input = bytes(512, 9);
  auto copy = pool->copy_of(input.data(), input.size());
  pool.reset();
  CHECK(*copy == input);
  copy.reset();  // the copy kept the pool alive; both go now (the sanitized tiers check)
}
