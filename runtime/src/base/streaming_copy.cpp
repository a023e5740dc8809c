#include "streaming_copy.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace earlybird {

#if defined(__SSE2__)

namespace {

constexpr std::size_t kLine = 64;

// Whole lines into a line-aligned destination: unaligned loads, streaming
// stores of 16 bytes (SSE2, in every x86-64 CPU).
void stream_lines(std::byte* to, const std::byte* from, std::size_t lines) {
  for (std::size_t i = 0; i < lines; ++i, to += kLine, from += kLine)
    for (std::size_t part = 0; part < kLine; part += sizeof(__m128i)) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + part));
      _mm_stream_si128(reinterpret_cast<__m128i*>(to + part), v);
    }
}

}  // namespace

void copy_streaming(void* to, const void* from, std::size_t bytes) {
  auto* dst = static_cast<std::byte*>(to);
  const auto* src = static_cast<const std::byte*>(from);
  const std::size_t head = std::min(bytes, (kLine - reinterpret_cast<std::uintptr_t>(dst) % kLine) % kLine);
  std::memcpy(dst, src, head);  // up to the destination's first line boundary
  const std::size_t lines = (bytes - head) / kLine;
  stream_lines(dst + head, src + head, lines);
  const std::size_t done = head + lines * kLine;
  std::memcpy(dst + done, src + done, bytes - done);
  _mm_sfence();
}

#else

void copy_streaming(void* to, const void* from, std::size_t bytes) { std::memcpy(to, from, bytes); }

#endif

}  // namespace earlybird
