// Run by kill_rank.sh: every rank runs 1 MiB allreduces in a loop; rank 1
// kills itself with SIGKILL after a few, in the middle of the next one (its
// progress thread has started it, its peers are inside it).
#include <earlybird/earlybird.hpp>

#include <csignal>
#include <cstdio>
#include <vector>

#include <unistd.h>

int main(int argc, char** argv) {
  earlybird::Runtime runtime(&argc, &argv);
  earlybird::Communicator world = runtime.world();
  std::vector<float> v(1 << 18, 1.0f);
  for (int k = 0;; ++k) {
    earlybird::Future f = world.allreduce(std::span<float>(v), earlybird::Op::sum);
    if (world.rank() == 1 && k == 20) kill(getpid(), SIGKILL);
    try {
      f.wait();
    } catch (const std::exception& e) {
      std::printf("rank %d: %s\n", world.rank(), e.what());
      std::fflush(stdout);
      return 1;
    }
  }
}
