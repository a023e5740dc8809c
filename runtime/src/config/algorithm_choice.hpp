// The algorithm a collective runs when the call names none (`auto`): the
// cost model's choice (collectives/predict.hpp) over the catalogue, per
// collective, P, size class and operator commutativity, cached for the
// process. Shared by the runtime and the PMPI library (which logs the
// choice), so both always agree.
#pragma once

#include <earlybird/collectives/catalogue.hpp>
#include <earlybird/collectives/outer_products.hpp>
#include <earlybird/collectives/predict.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace earlybird::config {

// The model predicts at most this many ranks (a larger communicator takes
// the choice for this many) until per-rank plans make large schedules cheap.
constexpr int kModelRanks = 64;

// The machine profile, decided once per process: the file EARLYBIRD_PROFILE
// names (a file that cannot be read or parsed is an earlybird::Error naming
// the variable), else the start-up probe's (use_probed_profile), else
// coll::default_profile().
const coll::MachineProfile& machine_profile();
bool profile_named_by_environment();
// Makes `probed` the process's profile unless EARLYBIRD_PROFILE names one or
// the profile was decided already (an earlier Runtime, or a choice made
// before); true when it did.
bool use_probed_profile(const coll::MachineProfile& probed);

// `bytes`: count x element size (per block for allgather and reduce-scatter);
// `commutative`: whether the operator may be applied out of rank order
// (true for collectives that reduce nothing); `direct`: every rank's window
// is directly reachable (one node, shared window: the node level; else the
// network level); `node_ranks`: Transport::node_ranks, > 0 when the ranks
// span nodes of that many consecutive ranks: then the model is two-level
// (coll::spanning_nodes), when that many divides min(P, kModelRanks) (else
// the network level alone). `shared_cores`: on a direct communicator whose
// ranks outnumber the node's cores, how many cores they share (the model
// then charges the profile's node wake per step another rank released and
// lets the ranks take turns on that many CPUs, coll::CostModel::cores); 0:
// a core per rank. "" when no algorithm suits. `explanation`, when given,
// receives the choice and the runners-up's predicted times the first time
// this class is decided in the process (else it is left empty).
// `reads_peers`: every rank reads the others' memory (Transport::
// reads_peer_memory): the peer_reads entries are then candidates where the
// profile's level has a peer-read cost (coll::predict_peer_reads);
// `peers_mapped`, with it: the call's buffers are in the peers' shared
// arenas (CollectiveOptions::shared_buffers), priced as loads. On a
// direct communicator a call publishing at most coll::kInlineLinesBytes is
// a class of its own (up to the most that fits), where the inline_flags
// entries are candidates on the lines (coll::predict_inline_lines) if the
// profile's node level has an inline cost; elsewhere they are priced by
// their schedule like every entry.
// The choice: the algorithm, and for a pipelined one the segment the model
// found fastest (coll::Prediction::segment_bytes; 0: the entry's default).
struct Choice {
  std::string algorithm;
  std::size_t segment_bytes = 0;
};
Choice default_algorithm(coll::Collective collective, std::size_t bytes, int ranks, bool commutative,
                         bool direct = false, int node_ranks = 0, std::string* explanation = nullptr,
                         int shared_cores = 0, bool reads_peers = false, bool peers_mapped = false);

// The class default_algorithm decides a call by, on one communicator (its
// P, level, shared cores and peer reads fixed): every call of a class gets
// the same choice. Communicator::tune pins a measured choice per class.
struct SizeClass {
  coll::Collective collective = coll::Collective::allreduce;
  std::size_t bytes = 0;  // the class's upper bound
  bool commutative = true;
  bool fits_inline = false;
  bool peers_mapped = false;
  auto operator<=>(const SizeClass&) const = default;
};
SizeClass size_class(coll::Collective collective, std::size_t bytes, int ranks, bool commutative, bool direct,
                     bool peers_mapped = false);
// default_algorithm's ranking for the call, fastest first, each with its
// predicted time and segment (its first entry is the choice); empty for one
// rank or no data.
std::vector<coll::Prediction> ranked_algorithms(coll::Collective collective, std::size_t bytes, int ranks,
                                                bool commutative, bool direct = false, int node_ranks = 0,
                                                int shared_cores = 0, bool reads_peers = false,
                                                bool peers_mapped = false);

// What `arrival_chosen` (auto_pap, an entry of `collective`'s catalogue)
// runs where no arrival order can pay for deciding one: the
// model's fastest static algorithm for the call (default_algorithm's
// choice), where it is predicted to take no longer than the arrival board
// costs auto_pap at that level (coll::board_cost: the profile's ticket and
// decision). With one rank late by D, a static algorithm ends about its own
// time after D and an arrival-ordered one no sooner than the board's cost
// after D, so an order can save at most the static algorithm's time, which
// the board then costs more than. A pure function of the arguments and the
// process's profile, as default_algorithm, so every rank agrees.
// std::nullopt: the board may pay (or the profile has no ticket cost);
// `explanation`, when given, receives why the board is skipped.
std::optional<Choice> arrival_stand_in(const coll::Algorithm& arrival_chosen, coll::Collective collective,
                                       std::size_t bytes, int ranks, bool commutative, bool direct = false,
                                       int node_ranks = 0, std::string* explanation = nullptr, int shared_cores = 0,
                                       bool reads_peers = false, bool peers_mapped = false);

// The model's fastest allreduce for the call (commutative operator) among
// the entries that run a plan's steps without an arrival order: what
// auto_pap runs where arrival order buys nothing (pap::decide's
// `balanced`; an arrival-ordered call runs a plan, never the inline lines
// or peer reads). The ring for one rank or no data, or where no such entry
// ranks. Every rank agrees, as for default_algorithm.
const coll::Algorithm& fastest_schedule(std::size_t bytes, int ranks, bool direct = false, int node_ranks = 0,
                                        int shared_cores = 0, bool reads_peers = false);

// Every choice default_algorithm makes with these arguments after the
// call's own — each collective, both commutativities where it reduces,
// every size class from 1 B to kDecidedAheadBytes and, on a direct
// communicator, the most that fits the inline lines — made now, on up to 8
// threads of its own that end with it, so that a first call of any of them
// finds its class decided (Communicator::warm_up). Throws what
// default_algorithm throws (a malformed EARLYBIRD_PROFILE). Measured on the
// project's 2-core VM since segments are ranked too: ~17-20 ms at P = 2
// (node level), ~47 ms at P = 4 over two nodes, ~1.4 s at P >= 64
// (kModelRanks) (docs/benchmarks.md, "`auto` chooses the segment").
constexpr std::size_t kDecidedAheadBytes = std::size_t{64} << 20;
void decide_ahead(int ranks, bool direct, int node_ranks, int shared_cores, bool reads_peers);
// How many times the model ranked a class in this process (tests).
std::size_t rankings_made();

// The cores a direct communicator of `ranks` ranks shares on a node of
// `cores` cores: `cores` when the ranks outnumber them, else 0.
constexpr int shared_cores(int ranks, int cores) { return ranks > cores ? cores : 0; }

// Communicator::sum_outer_products when the call names no algorithm: the
// model's first choice (coll::predict_outer_products) for min(P,
// kModelRanks), the matrix's rows and columns, the element size and the
// level; a pure function of those, cached for the process. `explanation` as
// for default_algorithm.
coll::OuterProductAlgorithm default_outer_product_algorithm(int ranks, std::size_t rows, std::size_t cols,
                                                            std::size_t elem_bytes, bool direct,
                                                            std::string* explanation = nullptr);

}  // namespace earlybird::config
