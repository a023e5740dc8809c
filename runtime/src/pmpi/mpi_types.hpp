// How MPI's predefined datatypes and operators map onto earlybird's. Anything
// without a mapping (derived datatypes, user operators, MPI_MAXLOC, pair
// types, ...) passes through to the MPI library.
#pragma once

#include <earlybird/types.hpp>

#include <optional>

#include <mpi.h>

namespace earlybird::pmpi {

// The earlybird type a reduction over `type` runs on; nullopt for every type
// that is not a predefined integer or floating-point type.
std::optional<Datatype> reduction_type(MPI_Datatype type);
// The earlybird operator for a predefined MPI operator; nullopt otherwise.
std::optional<Op> predefined_op(MPI_Op op);
// Whether `type` is a predefined type without holes, which data-moving
// collectives (bcast, allgather) can send as plain bytes.
bool contiguous_predefined(MPI_Datatype type);
// Size of one element of `type` in bytes (0 if MPI cannot tell).
std::size_t type_bytes(MPI_Datatype type);

}  // namespace earlybird::pmpi
