// Text formatting shared by eb-bench's tables and CSV files: fixed-point
// numbers and byte counts.
#pragma once

#include <cstddef>
#include <string>

namespace earlybird::bench {

// `v` with `digits` digits after the point; "n/a" when `v` is NaN.
std::string fixed(double v, int digits);

// "4 MiB", "64 KiB", "12 B": the largest unit that divides the count exactly.
std::string format_bytes(std::size_t bytes);

}  // namespace earlybird::bench
