// fault_in_pages and clear_window (transport.hpp): a window's pages mapped
// before its first collective needs them; what of it starts zero. A fresh window's page costs a fault (2-3 us on the
// project's VM) the first time each process touches it: at P = 2 a 4 KiB
// allreduce took 3-4 of them on a new communicator.
#include "transport.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace earlybird {

void fault_in_pages(std::byte* begin, std::size_t bytes) {
  if (!begin || bytes == 0) return;
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto start = reinterpret_cast<std::uintptr_t>(begin);
  const std::uintptr_t first = start / page * page;
  const std::uintptr_t end = (start + bytes + page - 1) / page * page;
#ifdef MADV_POPULATE_WRITE
  if (madvise(reinterpret_cast<void*>(first), end - first, MADV_POPULATE_WRITE) == 0) return;
#endif
  for (std::uintptr_t at = first; at < end; at += page)  // a byte of the range in each page
    (void)*reinterpret_cast<volatile const std::byte*>(std::max(at, start));
}

void clear_window(std::byte* base, WindowSize window, bool poison_scratch) {
  const std::size_t zeroed = std::min(window.zeroed, window.bytes);
  std::memset(base, 0, zeroed);
  if (poison_scratch) std::memset(base + zeroed, 0xff, window.bytes - zeroed);
}

}  // namespace earlybird
