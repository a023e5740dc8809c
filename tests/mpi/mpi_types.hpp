// MPI datatypes and operators matching earlybird's, for oracle calls.
#pragma once

#include <earlybird/types.hpp>

#include <mpi.h>

#include <cstdint>

namespace earlybird::testing {

template <class T>
MPI_Datatype mpi_type();
template <> inline MPI_Datatype mpi_type<std::int8_t>() { return MPI_INT8_T; }
template <> inline MPI_Datatype mpi_type<std::int16_t>() { return MPI_INT16_T; }
template <> inline MPI_Datatype mpi_type<std::int32_t>() { return MPI_INT32_T; }
template <> inline MPI_Datatype mpi_type<std::int64_t>() { return MPI_INT64_T; }
template <> inline MPI_Datatype mpi_type<std::uint8_t>() { return MPI_UINT8_T; }
template <> inline MPI_Datatype mpi_type<std::uint16_t>() { return MPI_UINT16_T; }
template <> inline MPI_Datatype mpi_type<std::uint32_t>() { return MPI_UINT32_T; }
template <> inline MPI_Datatype mpi_type<std::uint64_t>() { return MPI_UINT64_T; }
template <> inline MPI_Datatype mpi_type<float>() { return MPI_FLOAT; }
template <> inline MPI_Datatype mpi_type<double>() { return MPI_DOUBLE; }

inline MPI_Op mpi_op(Op op) {
  switch (op) {
    case Op::sum: return MPI_SUM;
    case Op::prod: return MPI_PROD;
    case Op::min: return MPI_MIN;
    case Op::max: return MPI_MAX;
    case Op::land: return MPI_LAND;
    case Op::lor: return MPI_LOR;
    case Op::lxor: return MPI_LXOR;
    case Op::band: return MPI_BAND;
    case Op::bor: return MPI_BOR;
    case Op::bxor: return MPI_BXOR;
  }
  return MPI_OP_NULL;
}

}  // namespace earlybird::testing
