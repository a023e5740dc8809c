// Arrival-pattern-aware allreduce (Proficz 2018): the pure functions behind
// the pre-reduced ring (PRR) and its arrival-ordered variants. Everything is
// indexed by arrival position `id` (0 = earliest), which is also the virtual
// rank the generators use; the runtime binds virtual rank id to the id-th rank
// to arrive.
//
// Pre-steps k[id]: how many ring steps rank id runs ahead of the plain ring.
// Chunk j's reduction is a chain of P-1 hops around the ring in arrival order,
// from its first sender sp[j] to its last reducer rp[j] = sp[j] - 1 (mod P);
// the plain ring (k = 0) has sp[j] = j. Rank id starts the chunks
// (id-1 + k[id-1], id + k[id]] (rank 0: [0, k[0]]): with f(id) = id + k[id],
//   sp[j] = min { id : f(id) >= j }.
// f is non-decreasing with steps of 0 or 1 and f(P-1) = P-1, so every chunk
// has exactly one first sender, rank 0 starts k[0] + 1 chunks and every other
// rank 0 or 1. (The published pseudo-code advances `id` at most once per
// chunk, which gives a rank a chunk below its own first chunk f(id) whenever
// f stays flat for two ranks; see tests/unit/test_pap_schedules.cpp.)
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace earlybird::coll {

// The pre-step recurrence of Proficz 2018, for arrival times sorted ascending
// (a[0] earliest) and tau > 0 the time of one ring step:
//   k[P-1] = 0
//   k[i]   = k[i+1] + 1  if a[P-1] - a[i+1] >= (k[i+1] + 1) tau,  else k[i+1].
// The condition looks at rank i+1's slack (in the paper a pre-step is a
// blocking send, which needs the receiver there), so k[P-2] is always 0.
// Throws std::invalid_argument for no arrivals, unsorted arrivals, a NaN, or
// tau <= 0 (or NaN). Infinite arrivals are ordinary values.
std::vector<std::uint32_t> prr_presteps(std::span<const double> sorted_arrivals, double tau);

// The recurrence's limit when ranks 0..P-2 arrive together and rank P-1 is
// arbitrarily late: k = [P-2, P-3, ..., 1, 0, 0] (P >= 2; [0] for P = 1).
// Rank 0 then starts chunks 0..P-2, whose chains 0 -> 1 -> ... -> P-1 need
// the late rank only for their last reduction; the late rank itself still
// starts chunk P-1 (k[P-2] = 0), a chain of 2(P-1) hops that begins only
// when it arrives. Throws std::invalid_argument for ranks < 1.
std::vector<std::uint32_t> presteps_last_late(int ranks);

// k = [P-1, P-2, ..., 1, 0]: every chunk starts at rank 0 and is reduced
// last by rank P-1, so no reduction of any other rank waits on rank P-1: it
// reduces every chunk last and starts the allgather. What `arrival_prr` runs.
// The recurrence's k[P-2] = 0 comes from the paper's blocking sends, which
// need the receiver present; earlybird's puts land in a late rank's window
// while it is away, so the online variant takes every pre-step it can.
// Throws std::invalid_argument for ranks < 1.
std::vector<std::uint32_t> presteps_all_ahead(int ranks);

// Why `k` is not a valid pre-step vector for `ranks` ranks, or "" when it is:
// length `ranks` (>= 1), k[P-1] = 0, and k[i] in {k[i+1], k[i+1] + 1}.
std::string presteps_problem(std::span<const std::uint32_t> k, int ranks);
// Valid for P = k.size() (an empty k is not valid).
bool valid_presteps(std::span<const std::uint32_t> k);

// sp[j]: the rank that first sends chunk j (from its input). Throws
// std::invalid_argument when `k` is not valid.
std::vector<int> prr_first_senders(std::span<const std::uint32_t> k);
// rp[j] = (sp[j] + P - 1) mod P: the rank that reduces chunk j last and
// starts its allgather. Throws std::invalid_argument when `k` is not valid.
std::vector<int> prr_last_reducers(std::span<const std::uint32_t> k);

}  // namespace earlybird::coll
