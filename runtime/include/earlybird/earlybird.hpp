// earlybird: MPI collectives as an asynchronous task runtime over MPI-3 RMA.
#pragma once

#include <earlybird/communicator.hpp>
#include <earlybird/error.hpp>
#include <earlybird/future.hpp>
#include <earlybird/partitioned.hpp>
#include <earlybird/persistent.hpp>
#include <earlybird/runtime.hpp>
#include <earlybird/shared_memory.hpp>
#include <earlybird/types.hpp>
