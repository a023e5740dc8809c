// Built by the consumer test with nothing but `pkg-config earlybird` and
// mpicxx: a persistent allreduce of the ranks' numbers, checked.
#include <earlybird/earlybird.hpp>

#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  earlybird::Runtime runtime(&argc, &argv);
  int wrong = 0;
  {
    earlybird::Communicator world = runtime.world();
    std::vector<long> value(3);
    auto sum = world.allreduce_init(std::span<long>(value), earlybird::Op::sum);
    for (int start = 0; start < 3; ++start) {
      value.assign(3, world.rank() + start);
      if (!sum.start().wait_for(std::chrono::seconds(60))) return 3;
      const long p = world.size();
      for (long v : value) wrong += v != p * (p - 1) / 2 + p * start;
    }
    if (world.rank() == 0) std::printf("hello_pkgconfig: %s\n", wrong ? "WRONG" : "ok");
  }
  return wrong ? 1 : 0;
}
