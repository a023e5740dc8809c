#include "mpi_types.hpp"

#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

namespace earlybird::pmpi {
namespace {

template <class T>
std::pair<MPI_Datatype, Datatype> as(MPI_Datatype type) {
  return {type, datatype_of<T>()};
}

}  // namespace

std::optional<Datatype> reduction_type(MPI_Datatype type) {
  if (type == MPI_DATATYPE_NULL) return std::nullopt;
  // MPI handles are not constant expressions in Open MPI: a table, not a
  // switch, made once (predefined handles never change).
  // The types reductions use most come first.
  static const std::pair<MPI_Datatype, Datatype> table[] = {
      as<float>(MPI_FLOAT),             as<double>(MPI_DOUBLE),
      as<int>(MPI_INT),                 as<long>(MPI_LONG),
      as<signed char>(MPI_SIGNED_CHAR), as<unsigned char>(MPI_UNSIGNED_CHAR),
      as<short>(MPI_SHORT),             as<unsigned short>(MPI_UNSIGNED_SHORT),
      as<unsigned>(MPI_UNSIGNED),       as<unsigned long>(MPI_UNSIGNED_LONG),
      as<long long>(MPI_LONG_LONG),     as<unsigned long long>(MPI_UNSIGNED_LONG_LONG),
      as<std::int8_t>(MPI_INT8_T),      as<std::uint8_t>(MPI_UINT8_T),
      as<std::int16_t>(MPI_INT16_T),    as<std::uint16_t>(MPI_UINT16_T),
      as<std::int32_t>(MPI_INT32_T),    as<std::uint32_t>(MPI_UINT32_T),
      as<std::int64_t>(MPI_INT64_T),    as<std::uint64_t>(MPI_UINT64_T),
  };
  for (const auto& [mpi, earlybird] : table)
    if (mpi == type) return earlybird;
  return std::nullopt;
}

std::optional<Op> predefined_op(MPI_Op op) {
  static const std::pair<MPI_Op, Op> table[] = {
      {MPI_SUM, Op::sum}, {MPI_PROD, Op::prod}, {MPI_MIN, Op::min},   {MPI_MAX, Op::max},   {MPI_LAND, Op::land},
      {MPI_LOR, Op::lor}, {MPI_LXOR, Op::lxor}, {MPI_BAND, Op::band}, {MPI_BOR, Op::bor}, {MPI_BXOR, Op::bxor},
  };
  for (const auto& [mpi, earlybird] : table)
    if (mpi == op) return earlybird;
  return std::nullopt;
}

namespace {

// Asks MPI (four queries): whether `type` is named and has no holes.
bool asked_contiguous_predefined(MPI_Datatype type) {
  if (type == MPI_DATATYPE_NULL) return false;
  int integers = 0, addresses = 0, types = 0, combiner = 0;
  PMPI_Type_get_envelope(type, &integers, &addresses, &types, &combiner);
  if (combiner != MPI_COMBINER_NAMED) return false;
  int size = 0;
  MPI_Aint lower = 0, extent = 0;
  PMPI_Type_size(type, &size);
  PMPI_Type_get_extent(type, &lower, &extent);
  return size > 0 && lower == 0 && extent == size;  // MPI_DOUBLE_INT & co. have holes
}

std::size_t asked_type_bytes(MPI_Datatype type) {
  int size = 0;
  if (type == MPI_DATATYPE_NULL || PMPI_Type_size(type, &size) != MPI_SUCCESS || size < 0) return 0;
  return static_cast<std::size_t>(size);
}

struct KnownType {
  MPI_Datatype type;
  bool contiguous;
  std::size_t bytes;
};

// The predefined types programs send most, asked once (their handles never
// change): a call on one of them makes no MPI query for its type.
const std::vector<KnownType>& common_types() {
  static const std::vector<KnownType> known = [] {
    std::vector<KnownType> types;
    for (MPI_Datatype type :
         {MPI_BYTE, MPI_CHAR, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_SHORT, MPI_UNSIGNED_SHORT, MPI_INT, MPI_UNSIGNED,
          MPI_LONG, MPI_UNSIGNED_LONG, MPI_LONG_LONG, MPI_UNSIGNED_LONG_LONG, MPI_FLOAT, MPI_DOUBLE, MPI_INT8_T,
          MPI_UINT8_T, MPI_INT16_T, MPI_UINT16_T, MPI_INT32_T, MPI_UINT32_T, MPI_INT64_T, MPI_UINT64_T})
      types.push_back({type, asked_contiguous_predefined(type), asked_type_bytes(type)});
    return types;
  }();
  return known;
}

const KnownType* common_type(MPI_Datatype type) {
  for (const KnownType& known : common_types())
    if (known.type == type) return &known;
  return nullptr;
}

}  // namespace

bool contiguous_predefined(MPI_Datatype type) {
  const KnownType* known = common_type(type);
  return known ? known->contiguous : asked_contiguous_predefined(type);
}

std::size_t type_bytes(MPI_Datatype type) {
  const KnownType* known = common_type(type);
  return known ? known->bytes : asked_type_bytes(type);
}

}  // namespace earlybird::pmpi
