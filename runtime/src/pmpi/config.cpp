#include "config.hpp"

#include "../api/collective_call.hpp"

#include <earlybird/future.hpp>

#include <cstdlib>
#include <string>

namespace earlybird::pmpi {
namespace {

constexpr std::array kCollectives = {coll::Collective::allreduce, coll::Collective::reduce, coll::Collective::bcast,
                                     coll::Collective::allgather, coll::Collective::reduce_scatter};

const char* env(const char* name) {
  const char* value = std::getenv(name);
  return value && *value ? value : nullptr;
}

bool flag(const char* name) {
  const char* value = env(name);
  return value && std::string(value) != "0";
}

std::size_t bytes_or(const char* name, std::size_t fallback) {
  const char* value = env(name);
  if (!value) return fallback;
  char* end = nullptr;
  const unsigned long long parsed = std::strtoull(value, &end, 10);
  if (*end != '\0' || value[0] == '-')
    throw Error(std::string(name) + "=" + value + " is not a byte count (a non-negative integer)");
  return static_cast<std::size_t>(parsed);
}

std::string algorithm_from(coll::Collective collective) {
  const char* value = env(algorithm_variable(collective));
  if (!value || std::string(value) == "auto") return "";
  if (!detail::find_runnable(collective, value))
    throw Error(std::string(algorithm_variable(collective)) + "=" + value + " names no " +
                coll::to_string(collective) + " algorithm; known: auto, " + detail::algorithm_names(collective));
  return value;
}

}  // namespace

const char* algorithm_variable(coll::Collective collective) {
  switch (collective) {
    case coll::Collective::allreduce: return "EARLYBIRD_ALLREDUCE";
    case coll::Collective::reduce: return "EARLYBIRD_REDUCE";
    case coll::Collective::bcast: return "EARLYBIRD_BCAST";
    case coll::Collective::allgather: return "EARLYBIRD_ALLGATHER";
    case coll::Collective::reduce_scatter: return "EARLYBIRD_REDUCE_SCATTER";
  }
  return "EARLYBIRD_?";
}

bool disabled_by_environment() { return flag("EARLYBIRD_DISABLE"); }

Config config_from_environment() {
  Config config;
  config.disabled = disabled_by_environment();
  config.verbose = flag("EARLYBIRD_VERBOSE");
  config.min_bytes = bytes_or("EARLYBIRD_MIN_BYTES", kDefaultMinBytes);
  config.segment_bytes = bytes_or("EARLYBIRD_SEGMENT_BYTES", 0);
  for (auto collective : kCollectives)
    config.algorithm[static_cast<std::size_t>(collective)] = algorithm_from(collective);
  return config;
}

}  // namespace earlybird::pmpi
