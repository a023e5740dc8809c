// The line every example prints under its title, so that a figure always
// states where it was measured: host, cores, P, ranks on this node (and
// whether that oversubscribes it), MPI library version.
#pragma once

#include <mpi.h>

#include <unistd.h>

#include <cstdio>
#include <string>
#include <thread>

namespace examples {

inline void print_machine_line(int ranks, int local_ranks) {
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  char library[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(library, &length);
  std::string mpi(library, static_cast<std::size_t>(length));
  mpi = mpi.substr(0, mpi.find_first_of(",\n"));
  const unsigned cores = std::thread::hardware_concurrency();
  std::printf("machine %s, %u cores; P = %d, %d rank(s) on this node%s; %s\n", host, cores, ranks, local_ranks,
              static_cast<unsigned>(local_ranks) > cores ? " (oversubscribed)" : "", mpi.c_str());
}

}  // namespace examples
