// The communicator options read from the environment
// (runtime/src/config/environment.cpp), here EARLYBIRD_TUNE and
// EARLYBIRD_TUNE_BUDGET_MS: off by default, a number of candidates or all,
// and a clear error naming the variable for anything else.
#include <doctest/doctest.h>

#include "config/environment.hpp"

#include <earlybird/error.hpp>

#include <cstdlib>
#include <string>

using earlybird::config::comm_options_from_environment;

namespace {

// Sets one variable for a scope (unset at construction and exit).
class Variable {
 public:
  Variable(const char* name, const char* value) : name_(name) {
    ::unsetenv(name_);
    if (value) ::setenv(name_, value, 1);
  }
  ~Variable() { ::unsetenv(name_); }
  Variable(const Variable&) = delete;
  Variable& operator=(const Variable&) = delete;

 private:
  const char* name_;
};

std::string error_for(const char* name, const char* value) {
  const Variable set(name, value);
  try {
    comm_options_from_environment();
  } catch (const earlybird::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("EARLYBIRD_TUNE: off unless set, a number of candidates or all") {
  {
    const Variable unset("EARLYBIRD_TUNE", nullptr);
    CHECK_FALSE(comm_options_from_environment().tune);
  }
  for (const char* off : {"off", "0", ""}) {
    CAPTURE(off);
    const Variable set("EARLYBIRD_TUNE", off);
    CHECK_FALSE(comm_options_from_environment().tune);
  }
  {
    const Variable set("EARLYBIRD_TUNE", "3");
    const auto o = comm_options_from_environment();
    CHECK(o.tune);
    CHECK(o.tune_candidates == 3);
  }
  {
    const Variable set("EARLYBIRD_TUNE", "all");
    const auto o = comm_options_from_environment();
    CHECK(o.tune);
    CHECK(o.tune_candidates == 0);
  }
  {
    const Variable set("EARLYBIRD_TUNE_BUDGET_MS", "7");
    CHECK(comm_options_from_environment().tune_budget.count() == 7);
  }
}

TEST_CASE("EARLYBIRD_TUNE: anything else is an error naming the variable and value") {
  for (const char* bad : {"yes", "-1", "3x", "on"}) {
    CAPTURE(bad);
    const std::string error = error_for("EARLYBIRD_TUNE", bad);
    CHECK(error.find(std::string("EARLYBIRD_TUNE=") + bad + " is not off, all or a number") != std::string::npos);
  }
  for (const char* bad : {"0", "fast"}) {
    CAPTURE(bad);
    CHECK(error_for("EARLYBIRD_TUNE_BUDGET_MS", bad).find(std::string("EARLYBIRD_TUNE_BUDGET_MS=") + bad) !=
          std::string::npos);
  }
}
