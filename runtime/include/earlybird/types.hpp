// Element types, reduction operators and per-call options of the public API.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

namespace earlybird {

// The basic MPI types earlybird reduces natively.
enum class Datatype : std::uint8_t {
  int8, int16, int32, int64, uint8, uint16, uint32, uint64, float32, float64
};

// The predefined MPI operators (MPI_SUM ... MPI_BXOR).
enum class Op : std::uint8_t { sum, prod, min, max, land, lor, lxor, band, bor, bxor };

std::size_t size_of(Datatype type);
const char* to_string(Datatype type);
const char* to_string(Op op);
// Whether `op` is defined for `type` (as in MPI: no logical or bitwise
// operators on floating-point types).
bool op_supports(Op op, Datatype type);

template <class T>
constexpr Datatype datatype_of() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, float>) return Datatype::float32;
  else if constexpr (std::is_same_v<U, double>) return Datatype::float64;
  else if constexpr (std::is_integral_v<U> && std::is_signed_v<U> && sizeof(U) == 1) return Datatype::int8;
  else if constexpr (std::is_integral_v<U> && std::is_signed_v<U> && sizeof(U) == 2) return Datatype::int16;
  else if constexpr (std::is_integral_v<U> && std::is_signed_v<U> && sizeof(U) == 4) return Datatype::int32;
  else if constexpr (std::is_integral_v<U> && std::is_signed_v<U> && sizeof(U) == 8) return Datatype::int64;
  else if constexpr (std::is_integral_v<U> && std::is_unsigned_v<U> && sizeof(U) == 1) return Datatype::uint8;
  else if constexpr (std::is_integral_v<U> && std::is_unsigned_v<U> && sizeof(U) == 2) return Datatype::uint16;
  else if constexpr (std::is_integral_v<U> && std::is_unsigned_v<U> && sizeof(U) == 4) return Datatype::uint32;
  else if constexpr (std::is_integral_v<U> && std::is_unsigned_v<U> && sizeof(U) == 8) return Datatype::uint64;
  else static_assert(sizeof(U) == 0, "earlybird: unsupported element type");
}

struct AllreduceOptions {
  // Catalogue name ("ring", "segmented_ring", "recursive_doubling"); empty:
  // earlybird chooses by message size (docs/algorithms.md says how).
  std::string algorithm;
  // Pipelining unit for segmented algorithms; 0: the algorithm's default.
  std::size_t segment_bytes = 0;
  // Watchdog for this call; zero: the communicator's default.
  std::chrono::milliseconds timeout{0};
};

}  // namespace earlybird
