// cpu_relax: the one spin-wait hint of the runtime, used by every busy-wait
// loop (Backoff's spin phase, FutureState::wait's short spin before blocking).
#pragma once

namespace earlybird {

// Tells the core that the caller is spinning: it frees pipeline resources for
// a hyper-thread sibling and saves power, without giving the core away.
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
  asm volatile("yield" ::: "memory");
#else
  // No spin hint on this architecture: do nothing. Not std::this_thread::yield():
  // callers spin only when the threads they wait on have cores of their own
  // (they skip spinning when topo::cores_shared()), and their spin counts are
  // sized for a hint of a few nanoseconds; a system call per iteration would
  // stretch a spin of tens of microseconds into tens of milliseconds. Callers
  // that must give the core away yield explicitly (Backoff's yield phase).
#endif
}

}  // namespace earlybird
