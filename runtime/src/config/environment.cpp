#include "environment.hpp"

#include <earlybird/error.hpp>

#include <cstdlib>
#include <string>

namespace earlybird::config {
namespace {

// The variable's value; nullptr when unset or empty.
const char* env(const char* name) {
  const char* value = std::getenv(name);
  return value && *value ? value : nullptr;
}

bool set_and_not_zero(const char* name) {
  const char* value = env(name);
  return value && std::string(value) != "0";
}

bool set_to_one(const char* name) {
  const char* value = env(name);
  return value && std::string(value) == "1";
}

// A decimal integer >= `least`, or `fallback` when the variable is unset.
std::size_t integer_or(const char* name, std::size_t fallback, std::size_t least) {
  const char* value = env(name);
  if (!value) return fallback;
  char* end = nullptr;
  const unsigned long long parsed = std::strtoull(value, &end, 10);
  if (*end != '\0' || value[0] == '-' || parsed < least)
    throw Error(std::string("earlybird: ") + name + "=" + value + " is not " +
                (least > 0 ? "a positive integer" : "a non-negative integer"));
  return static_cast<std::size_t>(parsed);
}

std::chrono::milliseconds milliseconds_or(const char* name, std::chrono::milliseconds fallback) {
  return std::chrono::milliseconds(integer_or(name, static_cast<std::size_t>(fallback.count()), 1));
}

std::string algorithm_from(coll::Collective collective) {
  const char* value = env(algorithm_variable(collective));
  if (!value || std::string(value) == "auto") return "";
  if (!coll::find_algorithm(collective, value))
    throw Error(std::string(algorithm_variable(collective)) + "=" + value + " names no " +
                coll::to_string(collective) + " algorithm; known: auto, " + coll::algorithm_names(collective));
  return value;
}

TransportPreference transport_from_environment() {
  const char* value = env("EARLYBIRD_TRANSPORT");
  if (!value || std::string(value) == "auto") return TransportPreference::automatic;
  if (std::string(value) == "rma") return TransportPreference::rma;
  if (std::string(value) == "p2p") return TransportPreference::p2p;
  throw Error(std::string("earlybird: EARLYBIRD_TRANSPORT=") + value + " is not one of auto, rma, p2p");
}

// EARLYBIRD_TUNE into o.tune and o.tune_candidates.
void tune_from_environment(CommOptions& o) {
  const char* value = env("EARLYBIRD_TUNE");
  if (!value || std::string(value) == "off") return;
  if (std::string(value) == "all") {
    o.tune = true;
    o.tune_candidates = 0;
    return;
  }
  char* end = nullptr;
  const unsigned long long parsed = std::strtoull(value, &end, 10);
  if (*end != '\0' || value[0] == '-')
    throw Error(std::string("earlybird: EARLYBIRD_TUNE=") + value + " is not off, all or a number of candidates");
  o.tune = parsed > 0;
  o.tune_candidates = static_cast<std::size_t>(parsed);
}

}  // namespace

CommOptions comm_options_from_environment() {
  CommOptions o;
  o.scratch_bytes = integer_or("EARLYBIRD_SCRATCH_BYTES", o.scratch_bytes, 1);
  o.timeout = milliseconds_or("EARLYBIRD_TIMEOUT_MS", o.timeout);
  o.straggler_after = milliseconds_or("EARLYBIRD_STRAGGLER_MS", o.straggler_after);
  o.verbose = set_to_one("EARLYBIRD_VERBOSE");
  o.caller_run = std::chrono::microseconds(
      integer_or("EARLYBIRD_CALLER_RUN_US", static_cast<std::size_t>(o.caller_run.count()), 0));
  o.transport = transport_from_environment();
  o.shared_window = !(env("EARLYBIRD_SHARED_WINDOW") && std::string(env("EARLYBIRD_SHARED_WINDOW")) == "0");
  tune_from_environment(o);
  o.tune_budget = milliseconds_or("EARLYBIRD_TUNE_BUDGET_MS", o.tune_budget);
  return o;
}

std::size_t shared_arena_bytes_from_environment() {
  constexpr std::size_t kGiB = std::size_t{1} << 30;
  constexpr std::size_t kMostGiB = std::size_t{1} << 16;  // 64 TiB: half of x86-64's user address space
  const std::size_t gib = integer_or("EARLYBIRD_SHARED_ARENA_GIB", 64, 0);
  if (gib > kMostGiB)
    throw Error("earlybird: EARLYBIRD_SHARED_ARENA_GIB=" + std::to_string(gib) + " is over " +
                std::to_string(kMostGiB));
  return gib * kGiB;
}

bool binding_requested(bool requested) {
  const char* value = env("EARLYBIRD_BIND");
  if (!value || !*value) return requested;
  return std::string(value) != "0";
}

bool probe_allowed_by_environment() {
  const char* value = env("EARLYBIRD_PROBE");
  return !(value && std::string(value) == "0");
}

std::chrono::microseconds injected_stall_from_environment() {
  return std::chrono::microseconds(integer_or("EARLYBIRD_INJECT_STALL_US", 0, 0));
}

void prepare_mpi_environment() {
  setenv("OMPI_MCA_osc_rdma_priority", "1", 0);
  setenv("UCX_USE_MT_MUTEX", "y", 0);
}

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

bool pmpi_disabled_by_environment() { return set_and_not_zero("EARLYBIRD_DISABLE"); }

PmpiConfig pmpi_config_from_environment() {
  PmpiConfig config;
  config.disabled = pmpi_disabled_by_environment();
  config.verbose = set_and_not_zero("EARLYBIRD_VERBOSE");
  config.min_bytes = integer_or("EARLYBIRD_MIN_BYTES", kDefaultMinBytes, 0);
  config.segment_bytes = integer_or("EARLYBIRD_SEGMENT_BYTES", 0, 0);
  config.scratch_bytes = comm_options_from_environment().scratch_bytes;
  config.shared_buffers = set_to_one("EARLYBIRD_SHARED_BUFFERS");
  for (auto collective : coll::kCollectives)
    config.algorithm[static_cast<std::size_t>(collective)] = algorithm_from(collective);
  return config;
}

}  // namespace earlybird::config
