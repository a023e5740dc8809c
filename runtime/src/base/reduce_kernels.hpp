// Reduction kernels: dst[i] = left[i] (op) right[i] for every basic type and
// predefined operator. The loops are branch-free per element, over restrict
// pointers, and this file is compiled with the vectoriser's dynamic cost
// model (runtime/CMakeLists.txt): GCC's -O2 alone leaves them scalar.
#pragma once

#include <earlybird/types.hpp>

#include <cstddef>

namespace earlybird::kernels {

// Precondition: op_supports(op, type); `left` and `right` each either equal
// `dst` or do not overlap it.
void reduce(Datatype type, Op op, void* dst, const void* left, const void* right, std::size_t count);

}  // namespace earlybird::kernels
