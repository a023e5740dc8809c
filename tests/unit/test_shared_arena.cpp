// SharedArena (runtime/src/rma/shared_arena.hpp), what earlybird::
// allocate_shared hands out: 64-byte-aligned, disjoint allocations; freed
// ranges coalesce (after freeing everything, the whole arena is one range
// again, whatever the order of the frees); a second mapping of the arena's
// file sees what was written through the first, as a peer's mapping does;
// memory from elsewhere is not the arena's to free; the arena's first line
// holds the stamp a peer checks.
#include <doctest/doctest.h>

#include "rma/shared_arena.hpp"

#include <earlybird/shared_memory.hpp>

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <new>
#include <utility>
#include <vector>

using namespace earlybird;

namespace {

std::uintptr_t address(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

}  // namespace

TEST_CASE("the arena's allocations are aligned, disjoint, and coalesce back into one range when freed") {
  SharedArena& arena = SharedArena::instance();
  REQUIRE(arena.usable());
  std::vector<std::pair<void*, std::size_t>> taken;
  for (std::size_t bytes : {0, 1, 63, 64, 65, 4096, 100000, 7, 1 << 20}) {
    void* p = arena.allocate(bytes);
    REQUIRE(p != nullptr);
    CHECK(address(p) % 64 == 0);
    CHECK(arena.contains(p));
    taken.emplace_back(p, std::max<std::size_t>(bytes, 1));
  }
  std::vector<std::pair<void*, std::size_t>> sorted = taken;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 1; i < sorted.size(); ++i)
    CHECK(address(sorted[i - 1].first) + sorted[i - 1].second <= address(sorted[i].first));
  // Free the middle ones first, then every other, then the rest.
  std::vector<std::size_t> order{4, 5, 3, 0, 2, 8, 1, 7, 6};
  for (std::size_t i : order) CHECK(arena.free(taken[i].first));
  void* whole = arena.allocate(arena.bytes() - SharedArena::kStampBytes);
  CHECK(address(whole) == arena.base() + SharedArena::kStampBytes);
  CHECK(arena.free(whole));
  CHECK_FALSE(arena.free(whole));  // twice
}

TEST_CASE("the arena starts with this process's stamp, which no allocation overwrites") {
  SharedArena& arena = SharedArena::instance();
  const auto* stamp = reinterpret_cast<const std::uint64_t*>(arena.base());
  CHECK(*stamp == SharedArena::stamp_for(static_cast<std::uint64_t>(getpid()), arena.base()));
  CHECK(*stamp != SharedArena::stamp_for(static_cast<std::uint64_t>(getpid()) + 1, arena.base()));
  void* first = arena.allocate(64);
  CHECK(address(first) >= arena.base() + SharedArena::kStampBytes);
  arena.free(first);
}

TEST_CASE("memory not from the arena is not the arena's to free") {
  SharedArena& arena = SharedArena::instance();
  int on_stack = 0;
  CHECK_FALSE(arena.contains(&on_stack));
  CHECK_FALSE(arena.free(&on_stack));
  void* p = arena.allocate(256);
  REQUIRE(p != nullptr);
  CHECK_FALSE(arena.free(static_cast<char*>(p) + 64));  // inside an allocation, not its start
  CHECK(arena.free(p));
  CHECK(arena.allocate(arena.bytes() + 1) == nullptr);  // more than the arena
  CHECK(arena.allocate(std::numeric_limits<std::size_t>::max()) == nullptr);  // no wrap when rounded up
  CHECK_THROWS_AS(allocate_shared(std::numeric_limits<std::size_t>::max()), std::bad_alloc);
}

TEST_CASE("another mapping of the arena's file sees what allocate_shared's memory holds") {
  SharedArena& arena = SharedArena::instance();
  auto* p = static_cast<std::uint64_t*>(allocate_shared(4096));
  REQUIRE(in_shared_arena(p));
  for (std::uint64_t i = 0; i < 512; ++i) p[i] = i * 0x9e3779b97f4a7c15ULL;
  const std::size_t offset = address(p) - arena.base();
  const std::size_t page = offset / 4096 * 4096;
  void* view = mmap(nullptr, 8192, PROT_READ, MAP_SHARED, arena.file(), static_cast<off_t>(page));
  REQUIRE(view != MAP_FAILED);
  CHECK(std::memcmp(static_cast<const char*>(view) + (offset - page), p, 4096) == 0);
  munmap(view, 8192);
  free_shared(p);
}

TEST_CASE("SharedAllocator keeps a vector in the arena") {
  std::vector<float, SharedAllocator<float>> v(1000, 1.5f);
  CHECK(in_shared_arena(v.data()));
  v.resize(100000, 2.5f);
  CHECK(in_shared_arena(v.data()));
  CHECK(v[999] == 1.5f);
  CHECK(v[99999] == 2.5f);
}
