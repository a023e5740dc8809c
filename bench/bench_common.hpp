// Shared pieces of eb-bench: argument parsing, statistics, the run header
// every result must carry, CSV output, and progress lines.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace earlybird::bench {

// --key value and --flag arguments after the subcommand.
class Args {
 public:
  Args(int argc, char** argv, int first);
  std::string get(const std::string& key, const std::string& fallback) const;
  long long get_int(const std::string& key, long long fallback) const;
  bool has(const std::string& key) const { return values_.count(key) > 0; }
  // Sizes in bytes: "8:16M" (powers of two from 8 B to 16 MiB) or "1K,64K,1M".
  std::vector<std::size_t> sizes(const std::string& key, const std::string& fallback) const;
  std::vector<std::string> list(const std::string& key, const std::string& fallback) const;
  const std::string& command_line() const { return command_line_; }

 private:
  std::map<std::string, std::string> values_;
  std::string command_line_;
};

std::size_t parse_bytes(const std::string& text);
std::string format_bytes(std::size_t bytes);

struct Stats {
  double median = 0, min = 0, p10 = 0, p90 = 0;
};
Stats stats_of(std::vector<double> samples);

// Element-wise maximum over ranks of per-iteration times (a collective's time
// is that of its slowest rank).
std::vector<double> max_over_ranks(const std::vector<double>& local, MPI_Comm comm);
// Element-wise average over ranks.
std::vector<double> mean_over_ranks(const std::vector<double>& local, MPI_Comm comm);

// Machine, MPI library, P, ranks per node, oversubscription, date and command:
// printed (rank 0) above every table.
void print_run_header(const char* job, const Args& args, MPI_Comm comm);

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

}  // namespace earlybird::bench
