#include "collective_table.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <span>
#include <stdexcept>

namespace earlybird::bench {
namespace {

constexpr float kSentinel = -1.0f;

int mpi_count(const Buffers& b) { return static_cast<int>(b.count); }
std::span<const float> in_span(const Buffers& b) { return {b.input.data(), b.input.size()}; }
std::span<float> out_span(Buffers& b) { return {b.output.data(), b.output.size()}; }

double allreduce_factor(int p) { return 2.0 * (p - 1) / p; }
double rooted_factor(int) { return 1.0; }
double gather_factor(int p) { return static_cast<double>(p - 1) / p; }

const std::array<CollectiveSpec, 5> kSpecs = {{
    {coll::Collective::allreduce, "allreduce", "float32, sum", "MPI_Allreduce", "coll_tuned_allreduce_algorithm", false,
     false, allreduce_factor,
     [](Communicator& c, Buffers& b, const CollectiveOptions& o) {
       return c.allreduce(in_span(b), out_span(b), Op::sum, o);
     },
     [](Buffers& b, MPI_Comm comm) {
       return MPI_Allreduce(b.input.data(), b.output.data(), mpi_count(b), MPI_FLOAT, MPI_SUM, comm);
     }},
    {coll::Collective::reduce, "reduce", "float32, sum", "MPI_Reduce", "coll_tuned_reduce_algorithm", true,
     false, rooted_factor,
     [](Communicator& c, Buffers& b, const CollectiveOptions& o) {
       return c.reduce(in_span(b), out_span(b), Op::sum, b.root, o);
     },
     [](Buffers& b, MPI_Comm comm) {
       return MPI_Reduce(b.input.data(), b.output.data(), mpi_count(b), MPI_FLOAT, MPI_SUM, b.root, comm);
     }},
    {coll::Collective::bcast, "bcast", "float32", "MPI_Bcast", "coll_tuned_bcast_algorithm", false, true,
     rooted_factor,
     [](Communicator& c, Buffers& b, const CollectiveOptions& o) { return c.bcast(out_span(b), b.root, o); },
     [](Buffers& b, MPI_Comm comm) { return MPI_Bcast(b.output.data(), mpi_count(b), MPI_FLOAT, b.root, comm); }},
    {coll::Collective::allgather, "allgather", "float32", "MPI_Allgather", "coll_tuned_allgather_algorithm", false,
     false, gather_factor,
     [](Communicator& c, Buffers& b, const CollectiveOptions& o) { return c.allgather(in_span(b), out_span(b), o); },
     [](Buffers& b, MPI_Comm comm) {
       return MPI_Allgather(b.input.data(), mpi_count(b), MPI_FLOAT, b.output.data(), mpi_count(b), MPI_FLOAT, comm);
     }},
    {coll::Collective::reduce_scatter, "reduce_scatter", "float32, sum", "MPI_Reduce_scatter_block",
     "coll_tuned_reduce_scatter_block_algorithm", false, false, gather_factor,
     [](Communicator& c, Buffers& b, const CollectiveOptions& o) {
       return c.reduce_scatter(in_span(b), out_span(b), Op::sum, o);
     },
     [](Buffers& b, MPI_Comm comm) {
       return MPI_Reduce_scatter_block(b.input.data(), b.output.data(), mpi_count(b), MPI_FLOAT, MPI_SUM, comm);
     }},
}};

void fill_input(std::vector<float>& v, int rank) {
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<float>((rank * 7 + static_cast<int>(i % 1013) * 3) % 11);
}

bool has_result(const CollectiveSpec& spec, const Buffers& b) { return !spec.result_on_root_only || b.rank == b.root; }

}  // namespace

const CollectiveSpec& collective_spec(const std::string& name) {
  for (const auto& spec : kSpecs)
    if (name == spec.name) return spec;
  std::string valid;
  for (const auto& known : collective_names()) valid += (valid.empty() ? "" : ", ") + known;
  throw std::invalid_argument("unknown collective '" + name + "' (choose one of " + valid + ")");
}

std::vector<std::string> collective_names() {
  std::vector<std::string> names;
  for (const auto& spec : kSpecs) names.emplace_back(spec.name);
  return names;
}

Buffers make_buffers(const CollectiveSpec& spec, int rank, int ranks, std::size_t count, int root) {
  const coll::Shape shape = coll::shape_of(spec.kind, ranks, count);
  Buffers b;
  b.count = count;
  b.rank = rank;
  b.root = root;
  b.input.resize(shape.input);
  b.output.resize(shape.output);
  b.reference.resize(shape.output);
  fill_input(b.input, rank);
  return b;
}

void reset_output(const CollectiveSpec& spec, Buffers& buffers) {
  if (spec.root_output_holds_message && buffers.rank == buffers.root)
    std::copy(buffers.input.begin(), buffers.input.end(), buffers.output.begin());
  else
    std::fill(buffers.output.begin(), buffers.output.end(), kSentinel);
}

bool output_matches(const CollectiveSpec& spec, const Buffers& buffers) {
  if (!has_result(spec, buffers)) return true;
  return std::memcmp(buffers.output.data(), buffers.reference.data(), buffers.output.size() * sizeof(float)) == 0;
}

std::size_t moved_bytes(const CollectiveSpec& spec, int ranks, std::size_t count) {
  const coll::Shape shape = coll::shape_of(spec.kind, ranks, count);
  return std::max(shape.input, shape.output) * sizeof(float);
}

}  // namespace earlybird::bench
