// The eb-bench subcommands and their options, as cli.cpp parses them (sizes
// in bytes, lists split at commas, every value checked). Each job returns the
// process exit code: 0, 2 on a wrong result, 3 when an earlybird algorithm
// failed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <earlybird/collectives/simulate.hpp>
#include <earlybird/earlybird.hpp>
#include <string>
#include <vector>

namespace earlybird::bench {

// What every job takes.
struct JobOptions {
  std::string command_line;  // printed in the run header
  std::string csv;           // rows written by rank 0; empty: none
};

struct SweepOptions : JobOptions {
  std::string collective = "allreduce";
  std::vector<std::size_t> sizes;           // bytes per rank
  std::vector<std::string> algorithms;      // "all", "none", or names (with "auto")
  std::vector<std::string> mpi_algorithms;  // empty: MPI's default choice only
  double budget_s = 0.3;                    // timing per contender and size
  std::size_t segment_bytes = 0;            // 0: each algorithm's default
  int fanout = 0;                           // 0: each algorithm's default
  int back_to_back = 1;                     // calls per timed sample, after one barrier
  int gap_us = 0;                           // idle microseconds before every sample's barrier
  bool futures = false;                     // calls without CollectiveOptions::blocking
  int root = 0;                             // reduce, bcast
  bool in_place = false;                    // every call in place (CallForm)
  bool shared_buffers = false;              // buffers from earlybird::allocate_shared (CallForm)
  int tune = -1;                            // a "tuned" row: Communicator::tune's candidates (0: all); -1: none
  double tune_budget_s = 0.1;               // TuneOptions::budget per size
};

struct OverlapOptions : JobOptions {
  std::vector<std::size_t> sizes;  // bytes per rank
  std::string algorithm = "auto";
  int iterations = 30;
};

struct PapOptions : JobOptions {
  std::vector<std::string> modes;       // "one-late", "rand-late"
  std::vector<double> delays_ms;        // maximum delays
  std::vector<std::size_t> sizes;       // bytes per rank
  std::vector<std::string> algorithms;  // "all" or names ("mpi": MPI_Allreduce)
  int iterations = 5;
  int baseline_iterations = 21;
  std::uint64_t seed = 1;
};

struct WarmupOptions : JobOptions {
  std::vector<std::size_t> sizes;  // bytes per rank
  int communicators = 8;           // fresh communicators per contender and size
  int iterations = 20;             // warm calls on each
  int gap_us = 0;                  // idle microseconds before every timed call (first and warm alike)
  std::string algorithm = "auto";
  std::vector<std::string> contenders;  // of earlybird, earlybird+warm_up, mpi
};

// The schedule simulator (no MPI): one algorithm's schedule under a Hockney
// model, optionally with arrival times.
struct SimulateOptions : JobOptions {
  std::string collective = "allreduce";
  std::string algorithm = "ring";
  int ranks = 16;
  std::size_t bytes = 1 << 20;  // per rank (per block for allgather, reduce_scatter), float32 elements
  coll::CostModel model;
  int node_ranks = 0;           // > 0: two levels, nodes of this many consecutive ranks
  std::vector<double> node_model;  // the node level's alpha, beta (with node_ranks)
  bool transfers_on_cpu = false;   // coll::CostModel::transfers_on_cpu
  std::string arrivals;         // "", one-late:MS, rand-late:MS or a file of one time in ms per rank
  std::uint64_t seed = 1;       // for rand-late
  std::size_t segment_bytes = 0;
  int fanout = 0;
  int path_steps = 12;  // critical-path steps printed (the last ones)
  bool per_rank = false;  // rank 0's plan under coll::simulate_symmetric instead of the whole schedule
};

// SUARA's grids against the flat algorithms, in the schedule simulator (no
// MPI): for every P and size, the grid suara_grid chooses and every flat
// candidate's predicted time.
struct SuaraTableOptions : JobOptions {
  std::vector<int> ranks;            // P
  std::vector<std::size_t> sizes;    // bytes per rank, float32 elements
  coll::CostModel model;
};

// How long one rank takes to build its plan (plan_for_rank) at large P, and
// the whole schedule's build beside it where that is feasible (no MPI).
struct PlanBuildOptions : JobOptions {
  std::string collective = "allreduce";
  std::vector<int> ranks;
  std::vector<std::string> algorithms;
  std::vector<std::size_t> sizes;  // bytes per rank, float32 elements
  int whole_up_to = 1024;          // largest P whose whole schedule is built too
  int node_ranks = 0;              // ranks per node (AlgorithmParams::node_ranks); 0: one node
};

// The cost model's parameters for the level the job runs on (node: every
// rank on one node; network: otherwise), written as a profile file; then
// measured times against the model's predictions.
struct CalibrateOptions : JobOptions {
  std::string output = "earlybird-profile.txt";  // empty: write nothing
  std::string level;                             // "node", "network"; empty: from where the ranks are
  double budget_s = 0.2;                         // timing per algorithm and size
  std::vector<std::size_t> validate_sizes;       // bytes per rank; empty: no validation
  std::vector<std::string> validate_algorithms;
};

// DSOP (Communicator::sum_outer_products): every algorithm against the naive
// baseline (the local product, then MPI_Allreduce of the matrix), float32.
struct DsopOptions : JobOptions {
  std::vector<std::size_t> dims = {1000, 2000, 4000};  // N = M
  std::vector<std::string> algorithms;                 // "all", or names (with "auto")
  int iterations = 5;
};

int run_sweep(Communicator& comm, const SweepOptions& options);
int run_dsop(Communicator& comm, const DsopOptions& options);
int run_calibrate(Communicator& comm, const CalibrateOptions& options);
int run_overlap(Communicator& comm, const OverlapOptions& options);
// Arrival-pattern benchmark (Proficz 2018).
int run_pap(Communicator& comm, const PapOptions& options);
// First collective on a fresh communicator vs warm ones, with and without
// Communicator::warm_up().
int run_warmup(Communicator& comm, const WarmupOptions& options);
int run_simulate(const SimulateOptions& options);
int run_suara_table(const SuaraTableOptions& options);
int run_plan_build(const PlanBuildOptions& options);

}  // namespace earlybird::bench
