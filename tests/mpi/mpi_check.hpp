// Helpers for MPI-tier test programs: a failure counter reported by every
// rank, and a watchdog-bounded wait that aborts the job (naming the rank)
// instead of letting a hang reach the CI time limit.
#pragma once

#include <earlybird/future.hpp>

#include <mpi.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>

namespace earlybird::testing {

// This process's rank in `comm`, and the communicator's size.
struct RankIn {
  int rank = 0;
  int size = 0;
};
inline RankIn rank_in(MPI_Comm comm) {
  RankIn r;
  MPI_Comm_rank(comm, &r.rank);
  MPI_Comm_size(comm, &r.size);
  return r;
}

class MpiCheck {
 public:
  explicit MpiCheck(int rank) : rank_(rank) {}
  void expect(bool ok, const std::string& what) {
    ++checks_;
    if (ok) return;
    ++failures_;
    std::fprintf(stderr, "FAIL rank %d: %s\n", rank_, what.c_str());
  }
  // Waits at most `limit`; on timeout prints the rank and case and aborts.
  void wait(const Future& f, const std::string& what, std::chrono::seconds limit = std::chrono::seconds(90)) {
    try {
      if (f.wait_for(limit)) return;
    } catch (const std::exception& e) {
      expect(false, what + ": " + e.what());
      return;
    }
    std::fprintf(stderr, "WATCHDOG rank %d: %s did not complete in %lld s\n", rank_, what.c_str(),
                 static_cast<long long>(limit.count()));
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  // Like wait(), but a failure is the expected outcome: returns the error
  // text, or "" if the collective succeeded.
  std::string error_of(const Future& f, const std::string& what,
                       std::chrono::seconds limit = std::chrono::seconds(90)) {
    try {
      if (f.wait_for(limit)) return "";
    } catch (const std::exception& e) {
      return e.what();
    }
    std::fprintf(stderr, "WATCHDOG rank %d: %s did not complete in %lld s\n", rank_, what.c_str(),
                 static_cast<long long>(limit.count()));
    MPI_Abort(MPI_COMM_WORLD, 3);
    return "";
  }
  // Collective: prints the totals on rank 0; returns the process exit code.
  int finish(const char* program) {
    long long mine[2] = {checks_, failures_}, all[2] = {0, 0};
    MPI_Allreduce(mine, all, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank_ == 0)
      std::printf("%s P=%d: %lld checks, %lld passed, %lld failed\n", program, size, all[0], all[0] - all[1], all[1]);
    return all[1] == 0 && all[0] > 0 ? 0 : 1;
  }

 private:
  int rank_;
  long long checks_ = 0;
  long long failures_ = 0;
};

// A whole-program watchdog for what MpiCheck::wait cannot bound (a blocking
// call outside a Future, an MPI call that never matches): if the object is
// still alive after `limit`, it prints the rank and aborts the job.
class JobDeadline {
 public:
  JobDeadline(int rank, std::chrono::seconds limit)
      : thread_([this, rank, limit] {
          std::unique_lock lock(mutex_);
          if (cv_.wait_for(lock, limit, [this] { return done_; })) return;
          std::fprintf(stderr, "WATCHDOG rank %d: the program did not finish in %lld s\n", rank,
                       static_cast<long long>(limit.count()));
          std::fflush(stderr);
          MPI_Abort(MPI_COMM_WORLD, 3);
        }) {}
  ~JobDeadline() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    cv_.notify_one();
    thread_.join();
  }
  JobDeadline(const JobDeadline&) = delete;
  JobDeadline& operator=(const JobDeadline&) = delete;

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;  // last: starts after the members it uses exist
};

}  // namespace earlybird::testing
