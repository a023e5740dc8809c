// Backoff (runtime/src/base/backoff.hpp): the action sequence of a polling
// loop's backoff, read through next() so that no test sleeps: spins first
// (unshared cores only), then yields, then sleeps of 1, 2, 4, ... us capped at
// 128 us; reset() starts over.
#include <doctest/doctest.h>

#include "base/backoff.hpp"
#include "base/cpu_relax.hpp"

#include <string>
#include <vector>

using namespace earlybird;

namespace {

using Kind = BackoffAction::Kind;

// The sequence as runs: how many steps of one kind in a row (sleeps of
// different lengths are separate runs).
struct Run {
  Kind kind;
  int sleep_us;
  int steps;
  bool operator==(const Run&) const = default;
};

std::vector<Run> runs_of(Backoff& backoff, int steps) {
  std::vector<Run> runs;
  for (int i = 0; i < steps; ++i) {
    const BackoffAction action = backoff.next();
    if (!runs.empty() && runs.back().kind == action.kind && runs.back().sleep_us == action.sleep_us)
      ++runs.back().steps;
    else
      runs.push_back({action.kind, action.sleep_us, 1});
  }
  return runs;
}

std::vector<Run> sleeps_1_to_128_then(int steps_at_cap) {
  std::vector<Run> runs;
  for (int us = 1; us < 128; us *= 2) runs.push_back({Kind::sleep, us, 1});
  runs.push_back({Kind::sleep, 128, steps_at_cap});
  return runs;
}

std::vector<Run> concat(std::vector<Run> head, const std::vector<Run>& tail) {
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

}  // namespace

namespace doctest {
template <>
struct StringMaker<BackoffAction> {
  static String convert(const BackoffAction& action) {
    const char* kind = action.kind == Kind::spin ? "spin" : action.kind == Kind::yield ? "yield" : "sleep";
    if (action.kind != Kind::sleep) return kind;
    return (std::string(kind) + "(" + std::to_string(action.sleep_us) + "us)").c_str();
  }
};
template <>
struct StringMaker<std::vector<Run>> {
  static String convert(const std::vector<Run>& runs) {
    std::string text;
    for (const Run& run : runs)
      text += std::string(StringMaker<BackoffAction>::convert({run.kind, run.sleep_us}).c_str()) + "x" +
              std::to_string(run.steps) + " ";
    return text.c_str();
  }
};
}  // namespace doctest

TEST_CASE("the constants the sequences below are written for") {
  CHECK(Backoff::kSpinSteps == 2000);
  CHECK(Backoff::kYieldSteps == 200);
  CHECK(Backoff::kSharedYieldSteps == 20000);
  CHECK(Backoff::kMaxDoublings == 7);
}

TEST_CASE("unshared: spins, then yields, then sleeps of 1, 2, 4, ... us capped at 128 us") {
  Backoff backoff(false);
  // Step n (from 1) spins while n < 2000, yields while n < 2200.
  const std::vector<Run> expected =
      concat({{Kind::spin, 0, 1999}, {Kind::yield, 0, 200}}, sleeps_1_to_128_then(10));
  CHECK(runs_of(backoff, 1999 + 200 + 7 + 10) == expected);
}

TEST_CASE("shared: no spins, yields for long, then sleeps that grow from 1 us") {
  Backoff backoff(true);
  const std::vector<Run> expected = concat({{Kind::yield, 0, 19999}}, sleeps_1_to_128_then(10));
  CHECK(runs_of(backoff, 19999 + 7 + 10) == expected);
}

TEST_CASE("the first sleep after the yields is 1 us in both modes") {
  for (const bool shared : {false, true}) {
    CAPTURE(shared);
    Backoff backoff(shared);
    BackoffAction action;
    int steps = 0;
    do {
      action = backoff.next();
      ++steps;
    } while (action.kind != Kind::sleep && steps < 100000);
    CHECK(action == BackoffAction{Kind::sleep, 1});
    CHECK(backoff.next() == BackoffAction{Kind::sleep, 2});
  }
}

TEST_CASE("the sleep stays at the cap however long the loop stays idle") {
  Backoff backoff(true);
  for (int i = 0; i < 100000; ++i) backoff.next();
  for (int i = 0; i < 3; ++i) CHECK(backoff.next() == BackoffAction{Kind::sleep, 128});
}

TEST_CASE("reset() restarts the sequence from the first spin or yield") {
  SUBCASE("unshared, from the sleeps") {
    Backoff backoff(false);
    for (int i = 0; i < 2210; ++i) backoff.next();
    CHECK(backoff.next().kind == Kind::sleep);
    backoff.reset();
    const std::vector<Run> expected =
        concat({{Kind::spin, 0, 1999}, {Kind::yield, 0, 200}}, sleeps_1_to_128_then(1));
    CHECK(runs_of(backoff, 1999 + 200 + 8) == expected);
  }
  SUBCASE("shared, from the middle of the yields") {
    Backoff backoff(true);
    for (int i = 0; i < 15000; ++i) backoff.next();
    backoff.reset();
    const std::vector<Run> expected = concat({{Kind::yield, 0, 19999}}, sleeps_1_to_128_then(1));
    CHECK(runs_of(backoff, 19999 + 8) == expected);
  }
}

TEST_CASE("pause() advances the same sequence as next() (spins and yields only: fast)") {
  Backoff backoff(false);
  for (int i = 0; i < 1999 + 200; ++i) backoff.pause();
  CHECK(backoff.next() == BackoffAction{Kind::sleep, 1});
  cpu_relax();  // the shared spin hint links and runs
}

TEST_CASE("for_messages: sleeps from the first step unless ranks of this machine share the cores") {
  Backoff alone = Backoff::for_messages(false);  // sleeps of 2, 4, ... us from the first step
  std::vector<Run> sleeps = sleeps_1_to_128_then(5);
  sleeps.erase(sleeps.begin());
  CHECK(runs_of(alone, 6 + 5) == sleeps);
  Backoff shared = Backoff::for_messages(true);
  CHECK(runs_of(shared, 19999 + 7 + 2) == concat({{Kind::yield, 0, 19999}}, sleeps_1_to_128_then(2)));
}

TEST_CASE("idle: sleeps from the first step, doubling from 2 us to a 2048 us cap") {
  CHECK(Backoff::kMaxIdleDoublings == 11);
  Backoff backoff = Backoff::idle();
  std::vector<Run> expected;
  for (int us = 2; us < 2048; us *= 2) expected.push_back({Kind::sleep, us, 1});
  expected.push_back({Kind::sleep, 2048, 3});
  CHECK(runs_of(backoff, 10 + 3) == expected);
  backoff.reset();
  CHECK(backoff.next() == BackoffAction{Kind::sleep, 2});
}

TEST_CASE("FineTimerSlack makes sleeps precise while it lives, then restores the thread's slack") {
  const int original = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
  prctl(PR_SET_TIMERSLACK, 50000UL, 0, 0, 0);
  {
    const FineTimerSlack precise;
    CHECK(prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0) == static_cast<int>(FineTimerSlack::kSlackNs));
  }
  CHECK(prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0) == 50000);
  prctl(PR_SET_TIMERSLACK, 200UL, 0, 0, 0);  // already finer: left alone
  {
    const FineTimerSlack precise;
    CHECK(prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0) == 200);
  }
  CHECK(prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0) == 200);
  prctl(PR_SET_TIMERSLACK, static_cast<unsigned long>(original), 0, 0, 0);
}
