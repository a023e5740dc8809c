// copy_streaming (runtime/src/base/streaming_copy.hpp): the same bytes as
// memcpy for every length around the line size and every offset of source
// and destination within a line, and for large copies; nothing outside the
// destination range is touched.
#include <doctest/doctest.h>

#include "base/streaming_copy.hpp"

#include <cstddef>
#include <cstring>
#include <vector>

using namespace earlybird;

namespace {

constexpr std::byte kGuard{0xA5};

std::vector<std::byte> pattern(std::size_t n) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>((i * 131 + 17) % 251);
  return v;
}

// Copies `bytes` from source offset `from_at` to destination offset `to_at`
// (both inside a 64-byte-aligned buffer) and checks the copy and the guards.
void check_copy(std::size_t bytes, std::size_t from_at, std::size_t to_at) {
  const std::size_t margin = 128;
  const auto source = pattern(bytes + from_at + margin);
  alignas(64) static std::byte sink[(1 << 20) + 4 * 128];
  REQUIRE(bytes + to_at + margin <= sizeof sink);
  std::memset(sink, static_cast<int>(kGuard), bytes + to_at + margin);
  copy_streaming(sink + to_at, source.data() + from_at, bytes);
  CHECK(std::memcmp(sink + to_at, source.data() + from_at, bytes) == 0);
  bool guards_kept = true;
  for (std::size_t i = 0; i < to_at; ++i) guards_kept = guards_kept && sink[i] == kGuard;
  for (std::size_t i = to_at + bytes; i < to_at + bytes + margin; ++i) guards_kept = guards_kept && sink[i] == kGuard;
  CHECK(guards_kept);
}

}  // namespace

TEST_CASE("every length up to three lines at every destination and some source offsets") {
  for (std::size_t bytes = 0; bytes <= 3 * 64 + 1; ++bytes)
    for (std::size_t to_at = 0; to_at < 64; ++to_at)
      for (std::size_t from_at : {0, 1, 8, 15, 63}) check_copy(bytes, from_at, to_at);
}

TEST_CASE("large copies, aligned and not") {
  for (std::size_t bytes : {std::size_t{64 * 1024}, std::size_t{(1 << 20) - 3}, std::size_t{1 << 20}})
    for (std::size_t to_at : {0, 1, 32})
      for (std::size_t from_at : {0, 7}) check_copy(bytes, from_at, to_at);
}
