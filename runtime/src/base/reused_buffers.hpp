// ReusedBuffers: the byte buffers a communicator copies an in-place call's
// input into (allgather's own block, reduce-scatter's P blocks: the input
// the operations read while the output is written over it), taken back when
// the call lets go of its copy, so that the next call copies into memory
// already mapped.
//
// Why: a buffer allocated per call is new memory whenever the allocator gave
// the last one back to the system (glibc returns large blocks at once, and
// trims its heap when a free leaves enough at the top, as another library's
// temporary buffers between two calls do), and every 4 KiB page of it then
// faults on first touch. On the project's 2-core VM that made an in-place
// reduce-scatter of 256 KiB blocks take ~1 ms against 36 us out of place
// (docs/benchmarks.md, "In place").
//
// Kept: at most kKeptBuffers buffers (beyond that the smallest is freed) of
// kKeptBytes in all (beyond that the largest are).
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

namespace earlybird {

class ReusedBuffers : public std::enable_shared_from_this<ReusedBuffers> {
 public:
  static constexpr std::size_t kKeptBuffers = 4;
  static constexpr std::size_t kKeptBytes = std::size_t{256} << 20;

  // A copy of the `bytes` bytes at `from`, in a kept buffer where one is
  // free. The buffer comes back here when the last owner lets go. Use on an
  // object made by std::make_shared.
  std::shared_ptr<const std::vector<std::byte>> copy_of(const void* from, std::size_t bytes);

  // Diagnostics (tests): buffers kept and free now.
  std::size_t kept() const;

 private:
  using Buffer = std::vector<std::byte>;
  std::unique_ptr<Buffer> take(std::size_t bytes);
  void take_back(Buffer* buffer);
  std::size_t kept_bytes() const;  // under mutex_

  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<Buffer>> free_;
};

}  // namespace earlybird
