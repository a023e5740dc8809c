// The schedule simulator: runs a Schedule event by event under a Hockney
// model and says when each rank would finish, and which chain of steps made
// the slowest one last (the critical path).
//
// Model (docs/algorithms.md, "The schedule simulator"):
// - a transfer of b bytes costs alpha + beta * b, holding the sender's out
//   port and the receiver's in port for that time (single-port per rank per
//   direction; a put's sender is its owner, a get's is the peer);
// - a reduction of b bytes costs gamma * b on its owner's CPU (gamma_apart
//   * b where it writes a third buffer, neither operand), a copy
//   copy_per_byte * b (a memory-bound pass; gamma when not given);
// - a copy of a rank's input onto the same range of its output costs nothing
//   where the schedule's shape says the two are one buffer (a bcast root's
//   own copy: the runtime skips it);
// - every step also costs per_step (the runtime's own cost of running a
//   step as a task: dependency counting, the hand-off to a worker);
// - a rank starts nothing before it arrives (arrivals, seconds; all 0 when
//   empty); a put into a rank that has not arrived is allowed (its window
//   exists: earlybird's arrival-ordered algorithms rely on it);
// - a step starts when its dependencies finished and its resources are free;
//   steps become ready in time order and take a resource first come, first
//   served (ties: program order): a dataflow executor with FIFO ports.
// - with node_ranks set (CostModel), transfers inside a node and between
//   nodes cost their level's alpha and beta, and a node's ranks share its
//   network link (one each way, held for the bytes' time, not for alpha).
// - with transfers_on_cpu set (CostModel: shared memory), a transfer inside
//   a node also holds its owner's CPU: the runtime's put there is a copy on
//   the rank's core, which its reductions need too (measured at P = 2 on
//   one node: a pipelined chain, whose copies and reductions a port model
//   overlaps, took 1.2-2.0x the port model's time at 16 MiB in three runs);
// - with cores set (CostModel: more ranks than CPUs on a node), the node's
//   ranks share that many CPUs: every step also holds one of them (the one
//   its rank ran on last if that is free when the step is ready, else the
//   earliest free). The switch from one rank to another is not charged
//   here: the cost model (predict.hpp) adds the wakes of the ranks that
//   wait on others (waits_on_other_ranks). (Charged per switch, at P = 4 on
//   2 cores it put a ring at 2.5x a binomial tree at 4 KiB, where the two
//   measured 1.5x apart: a real rank runs all its ready steps once it has a
//   CPU.)
// Not modelled: contention inside the network beyond the nodes' links (every
// pair of nodes has its own path), the runtime's per-step overhead beyond
// alpha, and cache effects.
#pragma once

#include <earlybird/collectives/schedule.hpp>

#include <cstddef>
#include <vector>

namespace earlybird::coll {

struct CostModel {
  double alpha = 0;          // seconds per transfer
  double beta = 0;           // seconds per byte transferred
  double gamma = 0;          // seconds per byte reduced
  double copy_per_byte = -1; // seconds per byte copied; < 0: gamma
  double per_step = 0;       // seconds every step costs beyond its transfer or its bytes
  // Two levels: ranks r and s share a node when r / node_ranks equals
  // s / node_ranks. A transfer inside a node costs node_alpha + node_beta *
  // bytes; one between nodes alpha + beta * bytes, and it also holds its
  // nodes' network links (out of the sender's node, into the receiver's) for
  // beta * bytes: the ranks of a node share one link each way. 0: one level
  // (every transfer alpha + beta * bytes, no links).
  int node_ranks = 0;
  double node_alpha = 0;
  double node_beta = 0;
  // An oversubscribed node: its ranks (node_ranks of them, all ranks with one
  // level) share `cores` CPUs. 0: a CPU per rank.
  int cores = 0;
  // Transfers made by their owner's CPU (a put into a shared-memory window
  // is a copy on the sending rank's core): such a transfer holds that CPU
  // as well as its ports, so a rank's transfers, copies and reductions take
  // turns. With node_ranks set it applies to transfers inside a node; with
  // one level, to every transfer (the model of one node).
  bool transfers_on_cpu = false;
  // Seconds per byte of a reduction into a third buffer (dst = left op src,
  // dst neither operand: one more stream than left op= src, and past the
  // caches its write costs a read for ownership too); < 0: gamma.
  double gamma_apart = -1;
  double copy_cost() const { return copy_per_byte < 0 ? gamma : copy_per_byte; }
  double reduce_cost(bool apart) const { return apart && gamma_apart >= 0 ? gamma_apart : gamma; }
  bool same_node(int r, int s) const { return node_ranks > 0 && r / node_ranks == s / node_ranks; }
  auto operator<=>(const CostModel&) const = default;
};

struct CriticalStep {
  StepId step;
  double start;   // seconds
  double finish;
  // Why it could not start earlier: "dependency", "busy" (a transfer port or
  // the CPU was busy), "arrival" or "start".
  const char* waited_for;
};

struct Simulation {
  std::vector<double> finish;   // per rank: its last step's end, or its arrival if it has none
  double time = 0;              // the slowest rank's finish
  std::vector<CriticalStep> critical_path;  // first step to last, ending at the last step to finish
};

// `elem_bytes`: bytes per element. `arrivals`: seconds per rank, or empty.
Simulation simulate(const Schedule& schedule, std::size_t elem_bytes, const CostModel& model,
                    const std::vector<double>& arrivals = {});

// A schedule's waits on another rank (a step depending on a step another
// rank ran: its rank must be woken for a peer's data): the most along any
// chain of dependencies, and how many times the ranks are woken for them,
// over all ranks: a rank's waits at one depth of the chain (its peers' data
// of one round: a root's gather, a reader's inputs) count once, as one wake
// finds them all.
struct WaitsOnOthers {
  int longest = 0;
  int total = 0;
};
WaitsOnOthers waits_on_other_ranks(const Schedule& schedule);

struct RankPlan;  // plan.hpp

// The same model run on one rank's plan alone, for schedules too large to
// build whole (a ring at P = 16384 has 4P(P - 1) steps, one rank's plan
// 4(P - 1)): every rank is taken to run the same timeline, so a flag this
// rank waits for arrives when this rank's own step raising the flag of that
// number finishes (its mirror: in a ring, prev's put k is rank's put k; in a
// butterfly, the partner's put of round k is the rank's). Ports: the rank's
// out port (puts), in port (gets) and CPU; a put's hold on the receiver's in
// port is not modelled (in a symmetric schedule the receiver's in port is
// as busy as the sender's out port). Exact, i.e. equal to simulate() of the
// whole schedule, for rank-symmetric schedules (the ring family when P
// divides the count; recursive doubling and Rabenseifner at powers of two:
// tests/unit/test_simulate_symmetric.cpp); an approximation otherwise (the
// first rank's timeline stands for all). One level only, all ranks at 0.
// Throws std::invalid_argument when the plan waits for a flag number it
// never raises, or when the mirrored flags wait on each other, or for a
// two-level model. `finish` holds the one time for every rank;
// `critical_path` is empty.
Simulation simulate_symmetric(const RankPlan& plan, std::size_t elem_bytes, const CostModel& model);

}  // namespace earlybird::coll
