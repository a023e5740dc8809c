// Shared pieces of eb-bench (bench_common.hpp).
#include "bench_common.hpp"

#include <earlybird/runtime.hpp>

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>
#include <ctime>
#include <stdexcept>
#include <string_view>
#include <thread>

extern char** environ;

namespace earlybird::bench {

Stats stats_of(std::vector<double> s) {
  Stats st;
  if (s.empty()) return st;
  std::sort(s.begin(), s.end());
  auto at = [&](double q) { return s[static_cast<std::size_t>(q * static_cast<double>(s.size() - 1) + 0.5)]; };
  st.min = s.front();
  st.p10 = at(0.10);
  st.median = at(0.50);
  st.p90 = at(0.90);
  return st;
}

std::vector<double> max_over_ranks(const std::vector<double>& local, MPI_Comm comm) {
  std::vector<double> out(local.size());
  MPI_Allreduce(local.data(), out.data(), static_cast<int>(local.size()), MPI_DOUBLE, MPI_MAX, comm);
  return out;
}

long long wrong_iterations(const std::vector<double>& local_wrong) {
  const auto any_rank = max_over_ranks(local_wrong, MPI_COMM_WORLD);
  return std::count_if(any_rank.begin(), any_rank.end(), [](double w) { return w > 0; });
}

std::vector<double> mean_over_ranks(const std::vector<double>& local, MPI_Comm comm) {
  std::vector<double> out(local.size());
  MPI_Allreduce(local.data(), out.data(), static_cast<int>(local.size()), MPI_DOUBLE, MPI_SUM, comm);
  int size = 1;
  MPI_Comm_size(comm, &size);
  for (double& v : out) v /= size;
  return out;
}

namespace {
// Ranks on this rank's node, and the number of nodes.
struct NodeShape {
  int ranks_per_node = 1;
  int nodes = 1;
};

NodeShape node_shape(MPI_Comm comm) {
  MPI_Comm node;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int local_rank = 0;
  NodeShape shape;
  MPI_Comm_rank(node, &local_rank);
  MPI_Comm_size(node, &shape.ranks_per_node);
  MPI_Comm_free(&node);
  int leader = local_rank == 0 ? 1 : 0;
  MPI_Allreduce(&leader, &shape.nodes, 1, MPI_INT, MPI_SUM, comm);
  return shape;
}

// The environment variables that change what is measured: earlybird's own and
// Open MPI's transport and collective settings ("NAME=value ...").
std::string measured_settings() {
  const char* prefixes[] = {"EARLYBIRD_",   "OMPI_MCA_coll_", "OMPI_MCA_osc_",
                            "OMPI_MCA_btl", "OMPI_MCA_pml",   "OMPI_MCA_mpi_yield_when_idle",
                            "UCX_"};
  std::string out;
  for (char** entry = environ; *entry; ++entry)
    for (const char* prefix : prefixes)
      if (std::string_view(*entry).starts_with(prefix)) out += (out.empty() ? "" : " ") + std::string(*entry);
  return out.empty() ? "(defaults)" : out;
}

// CPUs the calling process may run on (mpirun's binding).
int allowed_cpu_count() {
  cpu_set_t set;
  CPU_ZERO(&set);
  return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
}
}  // namespace

void print_run_header(const char* job, const std::string& command_line, MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const NodeShape shape = node_shape(comm);
  const int per_node = shape.ranks_per_node;
  const int nodes = shape.nodes;
  const int per_machine = ranks_on_this_machine(comm, per_node);
  const bool over = per_machine > static_cast<int>(std::thread::hardware_concurrency());
  if (rank != 0) return;
  const int mask = allowed_cpu_count();
  char library[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(library, &length);
  std::string lib(library, static_cast<std::size_t>(length));
  lib = lib.substr(0, lib.find_first_of(",\n"));
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  char date[64];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  std::printf("# eb-bench %s\n# machine: %s, %u hardware threads\n# MPI: %s\n", job, host,
              std::thread::hardware_concurrency(), lib.c_str());
  std::printf("# P = %d, nodes = %d, ranks per node = %d, oversubscribed = %s", size, nodes, per_node,
              over ? "yes" : "no");
  if (per_machine != per_node)  // emulated hosts: several nodes on one machine
    std::printf(" (%d ranks share one machine's %u hardware threads)", per_machine,
                std::thread::hardware_concurrency());
  std::printf(", CPUs per rank (rank 0's mask) = %d\n", mask);
  if (per_machine > 1 && mask * per_machine > static_cast<int>(std::thread::hardware_concurrency()))
    std::printf("# note: the ranks' CPU masks overlap; on a 16-core node that cost ~4 ms stalls at 256 KiB-4 MiB "
                "(docs/design.md, \"Threads\"): mpirun --bind-to core (or --mca mpi_yield_when_idle 1) avoids "
                "them\n");
  std::printf("# date: %s\n# command: %s\n# settings: %s\n", date, command_line.c_str(), measured_settings().c_str());
}

Csv::Csv(const std::string& path, const std::string& header, int rank) {
  if (path.empty() || rank != 0) return;
  file_ = std::fopen(path.c_str(), "w");
  if (!file_) throw std::runtime_error("cannot write " + path);
  std::fprintf(file_, "%s\n", header.c_str());
}

Csv::~Csv() {
  if (file_) std::fclose(file_);
}

void Csv::row(const std::string& line) {
  if (file_) std::fprintf(file_, "%s\n", line.c_str());
}

void progress(int rank, const std::string& line) {
  if (rank == 0) std::fprintf(stderr, "  .. %s\n", line.c_str());
}

int iterations_for(double seconds_per_iteration, double budget_s, int min_iters, int max_iters) {
  if (seconds_per_iteration <= 0) return max_iters;
  const double n = budget_s / seconds_per_iteration;
  return static_cast<int>(std::clamp(n, static_cast<double>(min_iters), static_cast<double>(max_iters)));
}

bool on_one_node() {
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int node_size = 0, world_size = 0;
  MPI_Comm_size(node, &node_size);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  MPI_Comm_free(&node);
  return node_size == world_size;
}

}  // namespace earlybird::bench
