// The eb-bench subcommands. Each returns the process exit code (non-zero when
// a result was wrong).
#pragma once

#include "bench_common.hpp"

#include <earlybird/earlybird.hpp>

namespace earlybird::bench {

int run_sweep(Communicator& comm, const Args& args);
int run_overlap(Communicator& comm, const Args& args);
// Arrival-pattern benchmark (Proficz 2018): exit 2 on a wrong result, 3 when an
// earlybird algorithm failed.
int run_pap(Communicator& comm, const Args& args);

}  // namespace earlybird::bench
