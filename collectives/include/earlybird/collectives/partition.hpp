// Chunks and segments, two separate ideas.
//
// A *chunk* is an algorithm's partition of the vector (a ring has P chunks, one
// per rank). A *segment* is the pipelining unit: a chunk is cut into segments of
// at most `segment_elems` elements that flow independently. Counts that do not
// divide evenly, counts smaller than P and count 0 are normal: chunks differ by
// at most one element and may be empty.
#pragma once

#include <earlybird/collectives/schedule.hpp>

#include <cstddef>
#include <vector>

namespace earlybird::coll {

// Chunk `index` of `parts` balanced chunks of [0, count): the first count % parts
// chunks hold one extra element.
Range chunk(std::size_t count, int parts, int index);

// The largest chunk of `parts` balanced chunks.
std::size_t max_chunk(std::size_t count, int parts);

// Cuts `range` into consecutive segments of at most `segment_elems` elements
// (segment_elems == 0 means "one segment"). An empty range has no segments.
std::vector<Range> segments(Range range, std::size_t segment_elems);

// Largest power of two <= p (p >= 1).
int floor_pow2(int p);
// ceil(log2(p)) for p >= 1.
int ceil_log2(int p);

}  // namespace earlybird::coll
