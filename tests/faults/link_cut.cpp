// Run by link_cut.sh across emulated hosts: 64 KiB allreduces in a loop for
// --seconds S, each result checked, while the script cuts a host's link.
// Prints the rounds, wrong results and the first error; stops at the first
// error (exit 1) or wrong result (exit 2).
#include "../common/oracle.hpp"

#include <earlybird/earlybird.hpp>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

int main(int argc, char** argv) {
  double seconds = 5;
  for (int i = 1; i + 1 < argc; i += 2)
    if (std::strcmp(argv[i], "--seconds") == 0) seconds = std::stod(argv[i + 1]);
  earlybird::Runtime runtime(&argc, &argv);
  int code = 0;
  {
    earlybird::Communicator world = runtime.world();
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    long rounds = 0;
    std::string error;
    // Every rank stops after the same round: rank 0 decides, in the data.
    for (bool go = true; go; ++rounds) {
      auto v = earlybird::testing::make_input<std::int32_t>(world.rank(), 16384, earlybird::Op::sum);
      v[0] = world.rank() == 0 && std::chrono::steady_clock::now() > end ? 1 : 0;  // rank 0's vote to stop
      try {
        world.allreduce(std::span<std::int32_t>(v), earlybird::Op::sum).wait();
      } catch (const std::exception& e) {
        error = e.what();
        code = 1;
        break;
      }
      go = v[0] == 0;
      v[0] = earlybird::testing::expected_value<std::int32_t>(world.size(), 0, earlybird::Op::sum);
      if (earlybird::testing::count_wrong(v, world.size(), earlybird::Op::sum) != 0) {
        error = "WRONG RESULT in round " + std::to_string(rounds);
        code = 2;
        break;
      }
    }
    std::printf("link_cut rank %d: %ld rounds, %s\n", world.rank(), rounds, error.empty() ? "no error" : error.c_str());
    std::fflush(stdout);
  }
  return code;
}
