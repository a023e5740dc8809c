// copy_streaming: memcpy with non-temporal stores, for a copy into memory
// that another core reads next and that this core will not read again (a
// put into a peer's window on one node: MpiTransport::put decides when).
//
// An ordinary store first fetches its line (a read for ownership); where
// the line sits in another core's cache, as a peer's window does after the
// peer read it, that is a transfer from that core per line. A non-temporal
// store only invalidates the other copies and writes the line to memory.
// Measured on the project's 2-core VM (docs/benchmarks.md, "Puts with
// streaming stores"): a scratch program whose two processes each copy into
// a shared region the other then copies out, µs per copy, memcpy against
// these 16-byte stores: 1 MiB 133 / 31, 8 MiB 704 / 387; the copy out did
// not get slower.
//
// Ends with a store fence: a flag release-stored after the call is seen by
// a reader only after the data.
#pragma once

#include <cstddef>

namespace earlybird {

// Where the compiler has no streaming stores for the target, plain memcpy.
void copy_streaming(void* to, const void* from, std::size_t bytes);

}  // namespace earlybird
