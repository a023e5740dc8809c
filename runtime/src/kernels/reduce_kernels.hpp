// Reduction kernels: dst[i] = dst[i] (op) src[i] for every basic type and
// predefined operator. The loops are branch-free per element so the compiler
// vectorises them (-O2 and above).
#pragma once

#include <earlybird/types.hpp>

#include <cstddef>

namespace earlybird::kernels {

// Precondition: op_supports(op, type); dst and src do not overlap.
void reduce(Datatype type, Op op, void* dst, const void* src, std::size_t count);

}  // namespace earlybird::kernels
