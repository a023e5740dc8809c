// Shared pieces of eb-bench: statistics, the run header every result must
// carry, CSV output, progress lines and the totals that decide the exit code.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

namespace earlybird::bench {

struct Stats {
  double median = 0, min = 0, p10 = 0, p90 = 0;
};
Stats stats_of(std::vector<double> samples);

// Element-wise maximum over ranks of per-iteration times (a collective's time
// is that of its slowest rank).
std::vector<double> max_over_ranks(const std::vector<double>& local, MPI_Comm comm);
// The number of iterations wrong on some rank, from this rank's per-iteration
// marks (1.0: wrong here, 0.0: right). Collective over MPI_COMM_WORLD.
long long wrong_iterations(const std::vector<double>& local_wrong);
// Element-wise average over ranks.
std::vector<double> mean_over_ranks(const std::vector<double>& local, MPI_Comm comm);

// Machine, MPI library, P, ranks per node, oversubscription, date and command:
// printed (rank 0) above every table.
void print_run_header(const char* job, const std::string& command_line, MPI_Comm comm);

// Every rank of MPI_COMM_WORLD on one node (the model's node level).
bool on_one_node();

// Writes rows to a CSV file on rank 0 (no-op when path is empty).
class Csv {
 public:
  Csv(const std::string& path, const std::string& header, int rank);
  ~Csv();
  void row(const std::string& line);

 private:
  std::FILE* file_ = nullptr;
};

// One line per finished configuration on rank 0's stderr.
void progress(int rank, const std::string& line);

// Repeat counts that keep each configuration around `budget_s` seconds.
int iterations_for(double seconds_per_iteration, double budget_s, int min_iters, int max_iters);

// What a job found over all its configurations.
struct Totals {
  long long wrong = 0;               // wrong results
  long long earlybird_failures = 0;  // earlybird algorithms that failed
  // 2 on a wrong result, else 3 when an earlybird algorithm failed, else 0.
  int exit_code() const { return wrong ? 2 : earlybird_failures ? 3 : 0; }
};

}  // namespace earlybird::bench
