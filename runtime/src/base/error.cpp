// base/: the public vocabulary every layer of the runtime uses — the element
// types and operators of earlybird/types.hpp (types.cpp, whose reductions run
// the loops of reduce_kernels.cpp) and the one exception type of
// earlybird/error.hpp (here).
#include <earlybird/error.hpp>

namespace earlybird {

// Out of line, so that Error's vtable and type information live in this one
// translation unit rather than in every one that throws or catches it.
Error::~Error() = default;

}  // namespace earlybird
