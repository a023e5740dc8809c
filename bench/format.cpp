// Text formatting shared by eb-bench's tables and CSV files (format.hpp).
#include "format.hpp"

#include <cmath>
#include <sstream>

namespace earlybird::bench {

std::string fixed(double v, int digits) {
  if (std::isnan(v)) return "n/a";
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(digits);
  s << v;
  return s.str();
}

std::string format_bytes(std::size_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB"};
  int u = 0;
  double v = static_cast<double>(bytes);
  while (v >= 1024 && u < 3 && std::fmod(v, 1024) == 0) {
    v /= 1024;
    ++u;
  }
  std::ostringstream out;
  out << v << " " << units[u];
  return out.str();
}

}  // namespace earlybird::bench
