#include "collective_table.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <span>
#include <stdexcept>

namespace earlybird::bench {
namespace {

constexpr float kSentinel = -1.0f;

int mpi_count(const Buffers& b) { return static_cast<int>(b.count); }
std::span<const float> in_span(const Buffers& b) { return {b.input.data(), b.input.size()}; }
std::span<float> out_span(Buffers& b) { return {b.output.data(), b.output.size()}; }
// The MPI call's send buffer: MPI_IN_PLACE where every rank's call is in place.
const void* mpi_input(const Buffers& b) { return b.form.in_place ? MPI_IN_PLACE : b.input.data(); }
// A reduce is in place on its root only.
bool reduce_in_place(const Buffers& b) { return b.form.in_place && b.rank == b.form.root; }

double allreduce_factor(int p) { return 2.0 * (p - 1) / p; }
double rooted_factor(int) { return 1.0; }
double gather_factor(int p) { return static_cast<double>(p - 1) / p; }

const std::array<CollectiveSpec, 5> kSpecs = {{
    {coll::Collective::allreduce, "allreduce", "float32, sum", "MPI_Allreduce", "coll_tuned_allreduce_algorithm", false,
     false, allreduce_factor,
     [](Communicator& c, Buffers& b, const CollectiveOptions& o) {
       return b.form.in_place ? c.allreduce(out_span(b), Op::sum, o) : c.allreduce(in_span(b), out_span(b), Op::sum, o);
     },
     [](Buffers& b, MPI_Comm comm) {
       return MPI_Allreduce(mpi_input(b), b.output.data(), mpi_count(b), MPI_FLOAT, MPI_SUM, comm);
     }},
    {coll::Collective::reduce, "reduce", "float32, sum", "MPI_Reduce", "coll_tuned_reduce_algorithm", true,
     false, rooted_factor,
     [](Communicator& c, Buffers& b, const CollectiveOptions& o) {
       const auto input = reduce_in_place(b) ? std::span<const float>(out_span(b)) : in_span(b);
       return c.reduce(input, out_span(b), Op::sum, b.form.root, o);
     },
     [](Buffers& b, MPI_Comm comm) {
       const void* input = reduce_in_place(b) ? MPI_IN_PLACE : b.input.data();
       return MPI_Reduce(input, b.output.data(), mpi_count(b), MPI_FLOAT, MPI_SUM, b.form.root, comm);
     }},
    {coll::Collective::bcast, "bcast", "float32", "MPI_Bcast", "coll_tuned_bcast_algorithm", false, true,
     rooted_factor,
     [](Communicator& c, Buffers& b, const CollectiveOptions& o) { return c.bcast(out_span(b), b.form.root, o); },
     [](Buffers& b, MPI_Comm comm) { return MPI_Bcast(b.output.data(), mpi_count(b), MPI_FLOAT, b.form.root, comm); }},
    {coll::Collective::allgather, "allgather", "float32", "MPI_Allgather", "coll_tuned_allgather_algorithm", false,
     false, gather_factor,
     [](Communicator& c, Buffers& b, const CollectiveOptions& o) {
       return b.form.in_place ? c.allgather(out_span(b), o) : c.allgather(in_span(b), out_span(b), o);
     },
     [](Buffers& b, MPI_Comm comm) {
       if (b.form.in_place)
         return MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b.output.data(), mpi_count(b), MPI_FLOAT, comm);
       return MPI_Allgather(b.input.data(), mpi_count(b), MPI_FLOAT, b.output.data(), mpi_count(b), MPI_FLOAT, comm);
     }},
    {coll::Collective::reduce_scatter, "reduce_scatter", "float32, sum", "MPI_Reduce_scatter_block",
     "coll_tuned_reduce_scatter_block_algorithm", false, false, gather_factor,
     [](Communicator& c, Buffers& b, const CollectiveOptions& o) {
       if (b.form.in_place) return c.reduce_scatter(out_span(b), Op::sum, o);
       return c.reduce_scatter(in_span(b), out_span(b), Op::sum, o);
     },
     [](Buffers& b, MPI_Comm comm) {
       return MPI_Reduce_scatter_block(mpi_input(b), b.output.data(), mpi_count(b), MPI_FLOAT, MPI_SUM, comm);
     }},
}};

void fill_input(FloatBuffer& v, int rank) {
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<float>((rank * 7 + static_cast<int>(i % 1013) * 3) % 11);
}

bool has_result(const CollectiveSpec& spec, const Buffers& b) { return !spec.result_on_root_only || b.rank == b.form.root; }

// Where this rank's call takes its input from its output (CallForm), in
// elements; nullopt where it does not (not in place, or a reduce's non-root;
// a bcast's root takes its message there whatever the form).
std::optional<std::size_t> input_in_output(const CollectiveSpec& spec, const Buffers& b) {
  if (spec.root_output_holds_message) return b.rank == b.form.root ? std::optional<std::size_t>(0) : std::nullopt;
  if (!b.form.in_place || (spec.kind == coll::Collective::reduce && !reduce_in_place(b))) return std::nullopt;
  return spec.kind == coll::Collective::allgather ? static_cast<std::size_t>(b.rank) * b.count : 0;
}

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

Buffers make_buffers(const CollectiveSpec& spec, int rank, int ranks, std::size_t count, CallForm form) {
  const coll::Shape shape = coll::shape_of(spec.kind, ranks, count);
  Buffers b;
  b.count = count;
  b.rank = rank;
  b.form = form;
  b.input = FloatBuffer(BenchAllocator<float>(form.shared_buffers));
  b.output = FloatBuffer(BenchAllocator<float>(form.shared_buffers));
  b.input.resize(shape.input);
  // In place, a reduce-scatter's one buffer holds its input.
  b.output.resize(form.in_place ? std::max(shape.input, shape.output) : shape.output);
  b.reference.resize(b.output.size());
  fill_input(b.input, rank);
  return b;
}

void reset_output(const CollectiveSpec& spec, Buffers& buffers) {
  std::fill(buffers.output.begin(), buffers.output.end(), kSentinel);
  if (const auto at = input_in_output(spec, buffers))
    std::copy(buffers.input.begin(), buffers.input.end(), buffers.output.begin() + static_cast<std::ptrdiff_t>(*at));
}

bool output_matches(const CollectiveSpec& spec, const Buffers& buffers) {
  if (!has_result(spec, buffers)) return true;
  // A reduce-scatter's result is one block: the whole output, or in place
  // the first block of its input's buffer.
  const std::size_t elems = spec.kind == coll::Collective::reduce_scatter ? buffers.count : buffers.output.size();
  return std::memcmp(buffers.output.data(), buffers.reference.data(), elems * sizeof(float)) == 0;
}

std::size_t moved_bytes(const CollectiveSpec& spec, int ranks, std::size_t count) {
  const coll::Shape shape = coll::shape_of(spec.kind, ranks, count);
  return std::max(shape.input, shape.output) * sizeof(float);
}

}  // namespace earlybird::bench
